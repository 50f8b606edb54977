import { describe, expect, it } from 'vitest';
import { RESULT_MARKER, resultLines, resultOf, type FileResult } from './world-file-protocol.js';

describe('the file Job result lines', () => {
  const big: FileResult = { ok: true, result: { content: 'x'.repeat(40_000), sha256: 'a'.repeat(64) } };

  it('cut a large result into short numbered lines and put it back together among other output', () => {
    const lines = resultLines(big);
    expect(lines.length).toBe(5);
    expect(lines.every((line) => line.length <= RESULT_MARKER.length + 12 + 8 * 1024)).toBe(true);
    const log = ['node: a warning on stderr', ...lines.slice(0, 2), 'more noise', ...lines.slice(2)];
    expect(resultOf(log)).toEqual(big);
  });

  it('take the last complete result, never a broken or reordered one', () => {
    const small: FileResult = { ok: false, code: 'not_found', message: 'nothing there' };
    const lines = resultLines(big);
    expect(resultOf([...resultLines(small), ...lines.slice(0, 3)])).toEqual(small);
    expect(resultOf([lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)])).toBeUndefined();
    expect(resultOf([`${RESULT_MARKER}1/1 {not json`, `${RESULT_MARKER}{"ok":true,"result":{}}`])).toBeUndefined();
    expect(resultOf(['no marker at all'])).toBeUndefined();
  });
});
