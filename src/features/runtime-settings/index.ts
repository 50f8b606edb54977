/**
 * The front door of the run-time settings: the settings staff change while the service runs (entry
 * policy, wake policy, session sources, quota defaults, the builds' and worlds' values), each one
 * row of the `settings` table with a revision, read and written only here. It stands below every
 * feature that reads a setting (accounts, servers, verifier, linking, builds) and imports no
 * feature itself; the staff pages' routes over it are the settings feature's.
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
