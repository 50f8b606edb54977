// One file per feature's tables; this index is what Drizzle and drizzle-kit read.
export * from './audit.js';
export * from './settings.js';
export * from './accounts.js';
export * from './images.js';
export * from './servers.js';
export * from './verifier.js';
export * from './operations.js';
export * from './builds.js';
export * from './submissions.js';
export * from './console.js';
export * from './linking.js';
export * from './op-login.js';
export * from './migration.js';
export * from './passkeys.js';
export * from './worlds.js';
export * from './world-files.js';
export * from './coordination.js';
