/**
 * The front door of the images feature: what the rest of the service may use of it.
 */
export { imageRoutes } from './routes.js';
export { canonicalImageRef, ensureWhitelisted, isPlatformImage, isWhitelisted, recordBuiltImage, resolveDigest } from './service.js';
export { createImages } from './module.js';
