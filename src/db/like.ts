/** `text` with LIKE's wildcards and its escape character escaped, so that it matches literally. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A LIKE pattern that matches `term` literally anywhere. */
export function containsPattern(term: string): string {
  return `%${escapeLike(term)}%`;
}
