/** The service's version: in the OpenAPI documents, update reports and database bundles. */
export const SERVICE_VERSION = '4.1.0';
