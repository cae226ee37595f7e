// A beer client's id as every comparison sees it. Ids are ASCII (CLT-ABC123), but a token, a request body or
// SQL a model writes may spell one in lower case, with spaces around it, or in Unicode look-alikes (a
// fullwidth "ＣＬＴ"): each is folded to the one spelling before it is compared or stored.
export function normalizeClientId(id: string): string {
  return id.normalize('NFKC').trim().toUpperCase();
}
