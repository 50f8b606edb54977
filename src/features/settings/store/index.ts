/**
 * The front door of the settings store: the staff pages' settings (entry policy, wake policy,
 * session sources), each one row of the `settings` table with a revision. Features that read a
 * setting (servers, verifier, accounts) import this; the pages' routes are the settings feature's.
 */
export { compareAndSet, parseRevision, readStored, readValues, revisionText, seedValue, writeValue } from './revisioned.js';
export {
  DEFAULT_ENTRY_POLICY,
  ENTRY_POLICY_KEY,
  EntryPolicyFields,
  entryPolicyProblem,
  readEntryPolicy,
  type EntryPolicy,
  type EntryPolicyView,
} from './entry-policy.js';
export { WAKE_POLICY_KEY, WakePolicyFields, readStoredWakePolicy, type WakePolicy } from './wake-policy.js';
export {
  AUTH_SOURCES_KEY,
  AuthSourceEntrySchema,
  activeSources,
  authSourcesProblem,
  outsideUrlProblem,
  primarySource,
  readAuthSources,
  type ActiveSource,
  type AuthSourceEntry,
  type AuthSourcesView,
} from './auth-sources.js';
export { QUOTA_DEFAULTS, readQuotaDefaults, type QuotaLimits } from './quota-defaults.js';
