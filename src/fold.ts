/** Nothing at or above U+0080 (surrogate halves included): plain ASCII. */
const ASCII = /^[^\u0080-\uffff]*$/;

/**
 * The one text folding used for search and for sorting text fields (docs/api.md "Ordering, filters
 * and search"): NFKD-normalise, drop combining marks, map dotless ı to i, lower-case, and map the
 * final sigma ς to σ (lower-casing turns a capital Σ into ς at the end of a word and σ elsewhere,
 * so `ΟΔΥΣ` would not find "Οδυσσεύς"; migration 0018 folded the stored texts again). Folded
 * strings compare by code point, so every database orders them alike.
 */
export function fold(text: string): string {
  // ASCII has nothing to decompose (most personnel numbers, many names and titles).
  if (ASCII.test(text)) return text.toLowerCase();
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/ı/g, 'i')
    .toLowerCase()
    .replace(/ς/g, 'σ');
}
