import { chance, list, pick, type Rng } from '../../src/demo/random.ts';
import { fold } from '../../src/fold.ts';

/**
 * What a bench file holds: one big company, which the load scenarios hit, and many small ones
 * beside it, so every query has to find its company's rows among everyone else's.
 */

interface Shape {
  employees: number;
  leaves: number;
  expenses: number;
}

export interface CompanyPlan extends Shape {
  id: number;
  name: string;
  timezone: string;
  /** Employees' e-mail addresses are at this domain. */
  domain: string;
}

const SIZES = {
  large: {
    big: { employees: 20_000, leaves: 1_000_000, expenses: 1_000_000 },
    smallCount: 500,
  },
  small: {
    big: { employees: 2_000, leaves: 50_000, expenses: 50_000 },
    smallCount: 20,
  },
} satisfies Record<string, { big: Shape; smallCount: number }>;

export type Size = keyof typeof SIZES;
export const SIZE_NAMES = Object.keys(SIZES) as Size[];

const SMALL_COMPANY: Shape = { employees: 50, leaves: 500, expenses: 500 };

/** Most small companies are Turkish; the rest are subsidiaries abroad, in their own zones. */
function smallCompanyName(rng: Rng): [name: string, timezone: string] {
  if (chance(rng, 0.8)) {
    const region = pick(
      rng,
      list('Anadolu | Ege | Marmara | Boğaziçi | Karadeniz | Toros | Çınar'),
    );
    const trade = pick(
      rng,
      list('Lojistik | Gıda | Tekstil | Yazılım | Enerji | Danışmanlık | İnşaat | Sağlık'),
    );
    return [`${region} ${trade} ${pick(rng, ['A.Ş.', 'Ltd. Şti.'])}`, 'Europe/Istanbul'];
  }
  return pick(rng, [
    [`${pick(rng, list('Rhein | Elbe | Alpen | Spree'))} Logistik GmbH`, 'Europe/Berlin'],
    [`Atelier ${pick(rng, list('Lumière | Bellecour | Garonne'))} SARL`, 'Europe/Paris'],
    [`Soluciones ${pick(rng, list('Ibérica | Levante | Cantábrico'))} S.L.`, 'Europe/Madrid'],
    [`${pick(rng, list('Al-Noor | Al-Waha | Nakheel'))} Trading LLC`, 'Asia/Dubai'],
  ] as const);
}

/** A domain from the name, with the id so that namesake companies do not share one. */
function domainOf(id: number, name: string): string {
  const slug = fold(name)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${slug}-${id}.example`;
}

export function companyPlans(rng: Rng, size: Size): CompanyPlan[] {
  const { big, smallCount } = SIZES[size];
  const plans: CompanyPlan[] = [
    {
      id: 1,
      name: 'Büyük Holding A.Ş.',
      timezone: 'Europe/Istanbul',
      domain: domainOf(1, 'Büyük Holding'),
      ...big,
    },
  ];
  for (let id = 2; id <= smallCount + 1; id++) {
    const [name, timezone] = smallCompanyName(rng);
    plans.push({ id, name, timezone, domain: domainOf(id, name), ...SMALL_COMPANY });
  }
  return plans;
}
