/** The front door of world files: the editor's list, read, write, delete, mkdir, rename and small upload. */
export { externalFileRoutes } from './routes.js';
