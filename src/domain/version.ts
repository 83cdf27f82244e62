/**
 * The interface version Prism implements (spec "Versioning" rule 1). Hub info, schema responses and health all
 * report it, so it lives in one place.
 */
export const INTERFACE_VERSION = '2026-05-19.0';
