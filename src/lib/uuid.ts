/**
 * Whether a string is a UUID (any version, either case). Skills, agents and evaluations accept an id or a name in
 * the same field; this is the one test that tells them apart, instead of a regex copied into each service.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
