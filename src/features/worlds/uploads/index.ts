/** The front door of world uploads: large files in parts, .zip files extracted in the world, and the ops list. */
export { externalUploadRoutes } from './routes.js';
export { sweepAbandonedUploads } from './sweep.js';
