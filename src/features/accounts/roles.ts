/** Owners and admins are staff: they work on the operator console, players on the panel. */
export const isStaffRole = (role: string): boolean => role === 'owner' || role === 'admin';

/** Sign-in answers report staff as `admin` (contract: role 'user'|'admin'). */
export const signInRole = (role: string): 'user' | 'admin' => (isStaffRole(role) ? 'admin' : 'user');
