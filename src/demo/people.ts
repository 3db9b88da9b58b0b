import { fold } from '../fold.ts';
import { type Day, isoDate } from './calendar.ts';
import { type Context, type DemoRecord, formatCents } from './context.ts';
import { digits, int, list, pick, type Rng, weighted, weightedKey, words } from './random.ts';

/**
 * Demo employees: where they come from (names and addresses per origin), the fixed showcase
 * names, departments with positions and salaries, and the making of one employee record.
 */

type EmployeeStatus = 'active' | 'inactive' | 'terminated';

/** A place employees come from: its names, and how its home addresses are written. */
export interface Origin {
  weight: number;
  /** Foreign residents' Turkish identity numbers start with 99. */
  foreign: boolean;
  firstNames: readonly string[];
  lastNames: readonly string[];
  address: (rng: Rng) => string;
}

/** Where employees come from; most are Turkish, the rest make folding and search interesting. */
export const ORIGINS = {
  tr: {
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
        list(
          'Bağdat Cad. | Atatürk Bulvarı | İstiklal Cad. | Gül Sok. | Barbaros Bulvarı | Şehit Muhtar Cad. | Gazi Osman Paşa Cad. | Çiçek Sok. | Ihlamur Sok.',
        ),
      );
      const [postcode, place] = pick(rng, [
        ['34710', 'Kadıköy/İstanbul'],
        ['34353', 'Beşiktaş/İstanbul'],
        ['34662', 'Üsküdar/İstanbul'],
        ['34394', 'Şişli/İstanbul'],
        ['34750', 'Ataşehir/İstanbul'],
        ['06690', 'Çankaya/Ankara'],
        ['35540', 'Karşıyaka/İzmir'],
        ['16140', 'Nilüfer/Bursa'],
        ['07100', 'Muratpaşa/Antalya'],
      ] as const);
      return `${street} No: ${int(rng, 1, 180)} D: ${int(rng, 1, 24)}, ${postcode} ${place}`;
    },
  },
  de: {
    weight: 12,
    foreign: true,
    firstNames: words(`
      Jürgen Bärbel Jörg Günther Käthe Uwe Sören Birgit Lukas Anja Matthias Sabine Björn Dörte
      Klaus Heike
    `),
    lastNames: words(`
      Müller Groß Schäfer Schröder Köhler Weiß Fuchs Hoffmann Krüger Schmidt Wagner Becker
      Hübner Strauß
    `),
    address: (rng) => {
      const street = pick(rng, list('Hauptstraße | Schloßallee | Gärtnerweg | Bahnhofstraße'));
      const [postcode, city] = pick(rng, [
        ['10115', 'Berlin'],
        ['80331', 'München'],
        ['50667', 'Köln'],
        ['20095', 'Hamburg'],
      ] as const);
      return `${street} ${int(rng, 1, 120)}, ${postcode} ${city}, Deutschland`;
    },
  },
  fr: {
    weight: 8,
    foreign: true,
    firstNames: words(`
      Sébastien Hélène François Amélie Jérôme Chloé Loïc Gaëlle Cécile Benoît Élodie Thibault
      Maëlle Noël
    `),
    lastNames: words(`
      Lefèvre Dubois Moreau Girard Bérard Lemaître Faure Chevalier Mercier Rousseau Gauthier
      Leclerc Dupré
    `),
    address: (rng) => {
      const street = pick(
        rng,
        list('rue de Rivoli | rue Sainte-Catherine | boulevard Saint-Germain | place Bellecour'),
      );
      const [postcode, city] = pick(rng, [
        ['75001', 'Paris'],
        ['69002', 'Lyon'],
        ['33000', 'Bordeaux'],
        ['13001', 'Marseille'],
      ] as const);
      return `${int(rng, 1, 120)} ${street}, ${postcode} ${city}, France`;
    },
  },
  es: {
    weight: 8,
    foreign: true,
    firstNames: words(`
      José María Íñigo Begoña Álvaro Lucía Sofía Raúl Nuria Andrés Ángela Jesús Mónica
    `),
    lastNames: words(`
      García Martínez Rodríguez López Hernández Gómez Peña Muñoz Jiménez Ibáñez Núñez Sánchez
      Díaz
    `),
    address: (rng) => {
      const street = pick(rng, list('Calle Mayor | Gran Vía | Calle de Alcalá | Paseo de Gràcia'));
      const [postcode, city] = pick(rng, [
        ['28013', 'Madrid'],
        ['08007', 'Barcelona'],
        ['41004', 'Sevilla'],
        ['46002', 'Valencia'],
      ] as const);
      return `${street} ${int(rng, 1, 120)}, ${postcode} ${city}, España`;
    },
  },
  en: {
    weight: 10,
    foreign: true,
    firstNames: words(`
      James Olivia Oliver Emily William Charlotte Harry Amelia Jack Sophie Thomas Grace Zoë
    `),
    lastNames: words(`
      Smith Jones Taylor Brown Williams Wilson Evans Johnson O'Brien Roberts Walker Wright
      Hughes
    `),
    address: (rng) => {
      const street = pick(rng, list('Baker Street | Oxford Road | Deansgate | High Street'));
      const [postcode, city] = pick(rng, [
        ['NW1 6XE', 'London'],
        ['M3 4LZ', 'Manchester'],
        ['EH2 2ER', 'Edinburgh'],
        ['BS1 4DJ', 'Bristol'],
      ] as const);
      return `${int(rng, 1, 220)} ${street}, ${city} ${postcode}, United Kingdom`;
    },
  },
  pl: {
    weight: 7,
    foreign: true,
    firstNames: words(`Łukasz Małgorzata Paweł Agnieszka Wojciech Żaneta Grzegorz Zofia`),
    lastNames: words(`Kowalski Wiśniewski Wójcik Zieliński Dąbrowski Nowak Lewandowski`),
    address: (rng) => {
      const street = pick(rng, list('Marszałkowska | Piotrkowska | Floriańska | Długa'));
      const [postcode, city] = pick(rng, [
        ['00-624', 'Warszawa'],
        ['90-001', 'Łódź'],
        ['31-019', 'Kraków'],
        ['80-831', 'Gdańsk'],
      ] as const);
      return `ul. ${street} ${int(rng, 1, 120)}, ${postcode} ${city}, Polska`;
    },
  },
} satisfies Record<string, Origin>;

type OriginKey = keyof typeof ORIGINS;

/** The first employees have fixed names, so every demo shows the tricky letters up front. */
const SHOWCASE_NAMES: readonly (readonly [string, string, OriginKey])[] = [
  ['Ayşe', 'Yılmaz', 'tr'],
  ['Jürgen', 'Müller', 'de'],
  ['Çağrı', 'Öztürk', 'tr'],
  ['Sébastien', 'Lefèvre', 'fr'],
  ['İsmail', 'Güneş', 'tr'],
  ['Bärbel', 'Groß', 'de'],
  ['Íñigo', 'Peña', 'es'],
  ['Łukasz', 'Wiśniewski', 'pl'],
];

/** A department and its positions, each drawn in proportion to its weight. */
export interface Department {
  name: string;
  weight: number;
  /** Title, relative weight, monthly gross salary range in TRY. */
  positions: readonly (readonly [string, number, number, number])[];
}

/** The demo company's departments, each with its positions and their monthly salaries. */
export const DEPARTMENTS: readonly Department[] = [
  {
    name: 'Engineering',
    weight: 28,
    positions: [
      ['Software Engineer', 10, 55_000, 90_000],
      ['Senior Software Engineer', 6, 85_000, 130_000],
      ['QA Engineer', 3, 45_000, 70_000],
      ['DevOps Engineer', 2, 70_000, 110_000],
      ['Data Engineer', 2, 65_000, 100_000],
      ['Engineering Manager', 1, 120_000, 170_000],
    ],
  },
  {
    name: 'Sales',
    weight: 18,
    positions: [
      ['Sales Representative', 6, 32_000, 50_000],
      ['Account Executive', 5, 40_000, 65_000],
      ['Key Account Manager', 2, 60_000, 90_000],
      ['Sales Director', 1, 110_000, 160_000],
    ],
  },
  {
    name: 'Operations',
    weight: 14,
    positions: [
      ['Operations Specialist', 5, 35_000, 50_000],
      ['Logistics Coordinator', 3, 35_000, 50_000],
      ['Procurement Specialist', 2, 40_000, 60_000],
      ['Office Manager', 1, 40_000, 55_000],
      ['Operations Manager', 1, 80_000, 110_000],
    ],
  },
  {
    name: 'Support',
    weight: 13,
    positions: [
      ['Support Agent', 6, 28_000, 38_000],
      ['Senior Support Agent', 3, 35_000, 48_000],
      ['Customer Success Manager', 2, 50_000, 75_000],
      ['Support Team Lead', 1, 55_000, 75_000],
    ],
  },
  {
    name: 'Finance',
    weight: 10,
    positions: [
      ['Accountant', 4, 38_000, 55_000],
      ['Senior Accountant', 2, 50_000, 70_000],
      ['Financial Analyst', 2, 45_000, 70_000],
      ['Payroll Specialist', 1, 38_000, 52_000],
      ['Finance Manager', 1, 85_000, 120_000],
    ],
  },
  {
    name: 'Marketing',
    weight: 10,
    positions: [
      ['Marketing Specialist', 4, 38_000, 55_000],
      ['Content Writer', 2, 32_000, 48_000],
      ['Performance Marketing Manager', 1, 60_000, 90_000],
      ['Brand Manager', 1, 70_000, 100_000],
    ],
  },
  {
    name: 'HR',
    weight: 7,
    positions: [
      ['HR Specialist', 3, 38_000, 55_000],
      ['Recruiter', 2, 38_000, 55_000],
      ['HR Business Partner', 1, 60_000, 85_000],
      ['HR Manager', 1, 85_000, 115_000],
    ],
  },
];

export interface Employee {
  id: number;
  department: string;
  status: EmployeeStatus;
  hireDay: Day;
  /** The days this employee's past leaves and expenses may fall on (empty when from > to). */
  from: Day;
  to: Day;
  record: DemoRecord;
}

/** An ASCII e-mail local part: fold() strips accents and ı; spell out what it leaves alone. */
export function emailPart(name: string): string {
  return fold(name)
    .replace(/ß/g, 'ss')
    .replace(/ł/g, 'l')
    .replace(/['’]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function uniqueEmail(first: string, last: string, taken: Set<string>): string {
  const base = `${emailPart(first)}.${emailPart(last)}`;
  let local = base;
  for (let n = 2; taken.has(local); n++) local = `${base}${n}`;
  taken.add(local);
  return `${local}@demo.example`;
}

/**
 * A Turkish identity number with valid check digits; foreign residents' numbers start with 99,
 * as real ones do.
 */
export function nationalId(rng: Rng, foreign: boolean): string {
  const head = foreign ? `99${digits(rng, 7)}` : `${int(rng, 1, 9)}${digits(rng, 8)}`;
  const d = [...head].map(Number);
  const odd = d.reduce((sum, v, i) => (i % 2 === 0 ? sum + v : sum), 0);
  const even = d.reduce((sum, v, i) => (i % 2 === 1 ? sum + v : sum), 0);
  const tenth = (((odd * 7 - even) % 10) + 10) % 10;
  const eleventh = (d.reduce((sum, v) => sum + v, 0) + tenth) % 10;
  return `${head}${tenth}${eleventh}`;
}

/** A Turkish IBAN (TR + 24 digits) at a real bank code, with valid ISO 7064 check digits. */
export function turkishIban(rng: Rng): string {
  const bank = pick(rng, ['00010', '00012', '00015', '00046', '00062', '00064', '00067', '00111']);
  const bban = `${bank}0${digits(rng, 16)}`;
  // "TR00" moved to the end, letters as numbers (T = 29, R = 27), per ISO 13616.
  const check = 98 - Number(BigInt(`${bban}292700`) % 97n);
  return `TR${String(check).padStart(2, '0')}${bban}`;
}

export function makeEmployee(
  rng: Rng,
  ctx: Context,
  index: number,
  id: number,
  emails: Set<string>,
): Employee {
  const showcase = SHOWCASE_NAMES[index];
  const originKey = showcase?.[2] ?? weighted(rng, originEntries());
  const origin: Origin = ORIGINS[originKey];
  const firstName = showcase?.[0] ?? pick(rng, origin.firstNames);
  const lastName = showcase?.[1] ?? pick(rng, origin.lastNames);
  const department = weighted(
    rng,
    DEPARTMENTS.map((d) => [d, d.weight] as const),
  );
  const [position, , minSalary, maxSalary] = weighted(
    rng,
    department.positions.map((p) => [p, p[1]] as const),
  );
  // Showcase people are long-serving and active, so they carry a full year of history.
  const status: EmployeeStatus = showcase
    ? 'active'
    : weightedKey(rng, { active: 86, inactive: 6, terminated: 8 });
  let hireDay: Day;
  let lastWorkday: Day;
  if (status === 'active') {
    hireDay = ctx.today - (showcase ? int(rng, 400, 3650) : int(rng, 30, 3650));
    lastWorkday = ctx.lastDay;
  } else {
    lastWorkday = ctx.today - int(rng, 10, 300);
    hireDay = Math.max(ctx.today - 3650, lastWorkday - int(rng, 60, 3000));
  }
  const salaryHundreds = int(rng, minSalary / 100, maxSalary / 100);
  return {
    id,
    department: department.name,
    status,
    hireDay,
    from: Math.max(ctx.today - 365, hireDay + 14),
    to: lastWorkday,
    record: {
      type: 'employee',
      company_id: ctx.companyId,
      id,
      employee_number: `E-${String(index + 1).padStart(4, '0')}`,
      first_name: firstName,
      last_name: lastName,
      email: uniqueEmail(firstName, lastName, emails),
      department: department.name,
      position,
      status,
      hire_date: isoDate(hireDay),
      national_id: nationalId(rng, origin.foreign),
      salary: formatCents(salaryHundreds * 100 * 100),
      iban: turkishIban(rng),
      address: origin.address(rng),
    },
  };
}

function originEntries(): (readonly [OriginKey, number])[] {
  return (Object.keys(ORIGINS) as OriginKey[]).map((key) => [key, ORIGINS[key].weight] as const);
}
