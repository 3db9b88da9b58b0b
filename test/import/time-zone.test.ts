import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ianaTimeZone } from '../../src/resources/company.ts';

it('stores a time zone as the IANA database spells it, whatever the letter case given', () => {
  for (const [given, stored] of [
    ['Europe/Istanbul', 'Europe/Istanbul'],
    ['europe/istanbul', 'Europe/Istanbul'],
    ['EUROPE/ISTANBUL', 'Europe/Istanbul'],
    ['utc', 'UTC'],
    ['america/port-au-prince', 'America/Port-au-Prince'],
    ['etc/gmt+3', 'Etc/GMT+3'],
    // Old aliases stay as given when spelled so; in another case, the zone they stand for.
    ['US/Eastern', 'US/Eastern'],
    ['Etc/UTC', 'Etc/UTC'],
    ['us/eastern', 'America/New_York'],
  ]) {
    assert.equal(ianaTimeZone(given as string), stored, given);
  }
});

it('refuses what names no IANA zone, offsets that Intl takes as zones included', () => {
  for (const given of ['Mars/Olympus', '+03:00', '-0500', '+03', 'local', '', ' Europe/Istanbul']) {
    assert.equal(ianaTimeZone(given), null, given);
  }
});
