/**
 * Numbers that are not plain decimal digits, percent-encoded for a query string: JavaScript's
 * `Number()` reads most of them (non-finite, exponent, hex, binary, octal, a sign, a fraction
 * of zero, surrounding spaces), the rest are digits of other scripts or with separators.
 * Every one is a 422 naming its parameter.
 */
export const NOT_PLAIN_NUMBERS = [
  'Infinity',
  '-Infinity',
  'NaN',
  '1e400',
  '1e2',
  '1E1',
  '0x10',
  '0b11',
  '0o7',
  '%2B5',
  '-0',
  '10.0',
  '5.',
  '.5e1',
  '%205',
  '5%20',
  '%095',
  '1_0',
  '1%2C0',
  '%EF%BC%95',
  '%D9%A5',
];
