import type { FeatureModule } from '../../deps.js';
import { imageRoutes } from './routes.js';

/** The images module: the platform image list and lookups. */
export function createImages(): FeatureModule {
  return { name: 'images', api: {}, routes: { external: [imageRoutes()] }, tasks: [] };
}
