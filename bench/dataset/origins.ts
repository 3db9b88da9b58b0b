import { int, list, pick, type Rng, words } from '../../src/demo/random.ts';

/**
 * Where bench employees come from: names and a home address per origin. The name lists are
 * copied from src/demo/people.ts (which does not export them), plus Arabic names transliterated
 * the ways HR systems meet them, so search and folding see many alphabets' worth of letters.
 */

export interface Origin {
  weight: number;
  /** Foreign residents' Turkish identity numbers start with 99. */
  foreign: boolean;
  firstNames: readonly string[];
  lastNames: readonly string[];
  address: (rng: Rng) => string;
}

export const ORIGINS: readonly Origin[] = [
  {
    weight: 55,
    foreign: false,
    firstNames: words(`
      Ayşe Çağrı İsmail Elif Mehmet Zeynep Mustafa Fatma Emre Gülşen Barış Şule Oğuz Özlem
      Tuğba Kübra Burak Deniz Ümit Işıl Gökhan Hülya Serkan Büşra İpek Doğan Sevgi Nazlı
      Çiğdem Ömer
    `),
    lastNames: words(`
      Yılmaz Öztürk Güneş Kaya Demir Şahin Çelik Yıldız Aydın Özdemir Arslan Doğan Kılıç Aslan
      Çetin Koç Kurt Özkan Şimşek Erdoğan Güler Akgül Ünal Karaca Bayraktar Gündoğdu İnce Uçar
    `),
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
    weight: 9,
    foreign: true,
    firstNames: words(`
      Jürgen Bärbel Jörg Günther Käthe Uwe Sören Birgit Lukas Anja Matthias Sabine Björn Dörte
    `),
    lastNames: words(`
      Müller Groß Schäfer Schröder Köhler Weiß Fuchs Hoffmann Krüger Schmidt Wagner Hübner Strauß
    `),
    address: (rng) => {
      const street = pick(rng, list('Hauptstraße | Schloßallee | Gärtnerweg | Bahnhofstraße'));
      const place = pick(rng, list('10115 Berlin | 80331 München | 50667 Köln | 20095 Hamburg'));
      return `${street} ${int(rng, 1, 120)}, ${place}, Deutschland`;
    },
  },
  {
    weight: 7,
    foreign: true,
    firstNames: words(`
      Sébastien Hélène François Amélie Jérôme Chloé Loïc Gaëlle Cécile Benoît Élodie Maëlle Noël
    `),
    lastNames: words(`
      Lefèvre Dubois Moreau Girard Bérard Lemaître Faure Chevalier Mercier Rousseau Dupré
    `),
    address: (rng) => {
      const street = pick(rng, list('rue de Rivoli | boulevard Saint-Germain | place Bellecour'));
      const place = pick(rng, list('75001 Paris | 69002 Lyon | 33000 Bordeaux | 13001 Marseille'));
      return `${int(rng, 1, 120)} ${street}, ${place}, France`;
    },
  },
  {
    weight: 7,
    foreign: true,
    firstNames: words(`José María Íñigo Begoña Álvaro Lucía Sofía Raúl Nuria Andrés Ángela Mónica`),
    lastNames: words(
      `García Martínez Rodríguez López Hernández Gómez Peña Muñoz Ibáñez Núñez Díaz`,
    ),
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
    weight: 9,
    foreign: true,
    firstNames: words(`James Olivia Oliver Emily William Charlotte Harry Amelia Jack Sophie Zoë`),
    lastNames: words(`Smith Jones Taylor Brown Williams Wilson Evans Johnson O'Brien Hughes`),
    address: (rng) => {
      const street = pick(rng, list('Baker Street | Oxford Road | Deansgate | High Street'));
      const place = pick(rng, list('London NW1 6XE | Manchester M3 4LZ | Edinburgh EH2 2ER'));
      return `${int(rng, 1, 220)} ${street}, ${place}, United Kingdom`;
    },
  },
  {
    weight: 6,
    foreign: true,
    firstNames: words(`Łukasz Małgorzata Paweł Agnieszka Wojciech Żaneta Grzegorz Zofia`),
    lastNames: words(`Kowalski Wiśniewski Wójcik Zieliński Dąbrowski Nowak Lewandowski`),
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
