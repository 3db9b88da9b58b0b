import { ORIGINS as DEMO_ORIGINS, type Origin } from '../../src/demo/people.ts';
import { int, list, pick, words } from '../../src/demo/random.ts';

/**
 * Where bench employees come from: names and a home address per origin. The names are the
 * demo's (src/demo/people.ts), plus Arabic names transliterated the ways HR systems meet them,
 * so search and folding see many alphabets' worth of letters. Some lists are a few names short
 * of the demo's, and the addresses are the bench's own, because the bench data stays byte for
 * byte what docs/performance.md was measured on.
 */

/** `names` less the space-separated `dropped` ones. */
function without(names: readonly string[], dropped: string): readonly string[] {
  const drop = new Set(words(dropped));
  return names.filter((name) => !drop.has(name));
}

export const ORIGINS: readonly Origin[] = [
  {
    ...DEMO_ORIGINS.tr,
    weight: 55,
    address: (rng) => {
      const street = pick(
        rng,
        list('Bağdat Cad. | Atatürk Bulvarı | İstiklal Cad. | Gül Sok. | Barbaros Bulvarı'),
      );
      const place = pick(
        rng,
        list(
          '34710 Kadıköy/İstanbul | 34353 Beşiktaş/İstanbul | 34662 Üsküdar/İstanbul | 06690 Çankaya/Ankara | 35540 Karşıyaka/İzmir | 16140 Nilüfer/Bursa | 07100 Muratpaşa/Antalya',
        ),
      );
      return `${street} No: ${int(rng, 1, 180)} D: ${int(rng, 1, 24)}, ${place}`;
    },
  },
  {
    ...DEMO_ORIGINS.de,
    weight: 9,
    firstNames: without(DEMO_ORIGINS.de.firstNames, 'Klaus Heike'),
    lastNames: without(DEMO_ORIGINS.de.lastNames, 'Becker'),
    address: (rng) => {
      const street = pick(rng, list('Hauptstraße | Schloßallee | Gärtnerweg | Bahnhofstraße'));
      const place = pick(rng, list('10115 Berlin | 80331 München | 50667 Köln | 20095 Hamburg'));
      return `${street} ${int(rng, 1, 120)}, ${place}, Deutschland`;
    },
  },
  {
    ...DEMO_ORIGINS.fr,
    weight: 7,
    firstNames: without(DEMO_ORIGINS.fr.firstNames, 'Thibault'),
    lastNames: without(DEMO_ORIGINS.fr.lastNames, 'Gauthier Leclerc'),
    address: (rng) => {
      const street = pick(rng, list('rue de Rivoli | boulevard Saint-Germain | place Bellecour'));
      const place = pick(rng, list('75001 Paris | 69002 Lyon | 33000 Bordeaux | 13001 Marseille'));
      return `${int(rng, 1, 120)} ${street}, ${place}, France`;
    },
  },
  {
    ...DEMO_ORIGINS.es,
    weight: 7,
    firstNames: without(DEMO_ORIGINS.es.firstNames, 'Jesús'),
    lastNames: without(DEMO_ORIGINS.es.lastNames, 'Jiménez Sánchez'),
    address: (rng) => {
      const street = pick(rng, list('Calle Mayor | Gran Vía | Calle de Alcalá | Paseo de Gràcia'));
      const place = pick(rng, list('28013 Madrid | 08007 Barcelona | 41004 Sevilla'));
      return `${street} ${int(rng, 1, 120)}, ${place}, España`;
    },
  },
  {
    weight: 7,
    foreign: true,
    firstNames: words(`
      Ahmed Mohammed Fatima Layla Omar Youssef Khaled Nour Mariam Hassan Aïcha Karim Rania
      Tarek Salma Hamza Zaynab Abdulrahman
    `),
    lastNames: list(
      'Al-Sayed | El-Masri | Haddad | Khalil | Mansour | Nasser | Saleh | Al-Hashimi | Abdullah | Farouk | Ben Youssef | Qasim | Abu Zayd | Bou Saab',
    ),
    address: (rng) => {
      const street = pick(
        rng,
        list('Sheikh Zayed Road | Shari al-Tahrir | Rainbow Street | Boulevard Mohammed V'),
      );
      const place = pick(
        rng,
        list('Dubai, UAE | Cairo, Egypt | Amman, Jordan | Casablanca, Morocco | Beirut, Lebanon'),
      );
      return `${int(rng, 1, 250)} ${street}, ${place}`;
    },
  },
  {
    ...DEMO_ORIGINS.en,
    weight: 9,
    firstNames: without(DEMO_ORIGINS.en.firstNames, 'Thomas Grace'),
    lastNames: without(DEMO_ORIGINS.en.lastNames, 'Roberts Walker Wright'),
    address: (rng) => {
      const street = pick(rng, list('Baker Street | Oxford Road | Deansgate | High Street'));
      const place = pick(rng, list('London NW1 6XE | Manchester M3 4LZ | Edinburgh EH2 2ER'));
      return `${int(rng, 1, 220)} ${street}, ${place}, United Kingdom`;
    },
  },
  {
    ...DEMO_ORIGINS.pl,
    weight: 6,
    address: (rng) => {
      const street = pick(rng, list('Marszałkowska | Piotrkowska | Floriańska | Długa'));
      const place = pick(rng, list('00-624 Warszawa | 90-001 Łódź | 31-019 Kraków'));
      return `ul. ${street} ${int(rng, 1, 120)}, ${place}, Polska`;
    },
  },
];

export const ORIGIN_WEIGHTS: readonly (readonly [Origin, number])[] = ORIGINS.map(
  (origin) => [origin, origin.weight] as const,
);
