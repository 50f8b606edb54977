/**
 * The front door of the settings feature: the platform settings pages (entry policy, wake policy,
 * session sources) and the proxy's read of the entry policy. What other features read of these
 * settings is its own feature below accounts and servers, `runtime-settings`.
 */
export { internalSettingsRoutes, settingsRoutes } from './routes.js';
export { createSettings } from './module.js';
