import {
  CATEGORIES as DEMO_CATEGORIES,
  type CategorySpec as DemoCategorySpec,
  type Merchant as DemoMerchant,
  merchant as m,
} from '../../src/demo/expenses.ts';

/**
 * Expense categories and their merchants: the demo's categories (src/demo/expenses.ts) with the
 * bench's own weights, US-dollar amounts and merchants, and a groceries category added.
 */

export type Currency = 'TRY' | 'EUR' | 'USD';
export type Merchant = DemoMerchant<Currency>;
export type CategorySpec = DemoCategorySpec<Currency>;

interface BenchSide {
  /** How often an expense is in this category; the weights add up to 100. */
  weight: number;
  /** The amount range in US dollars; TRY and EUR ranges are the demo's. */
  usd: readonly [number, number];
  merchants: readonly Merchant[];
}

/** The demo's category `name`, with what the bench sets itself. */
function demoCategory(name: string, { weight, usd, merchants }: BenchSide): CategorySpec {
  const spec = DEMO_CATEGORIES.find((category) => category.name === name);
  if (spec === undefined) throw new Error(`bench: the demo has no expense category ${name}`);
  return { ...spec, weight, range: { ...spec.range, USD: usd }, merchants };
}

export const CATEGORIES: readonly CategorySpec[] = [
  demoCategory('Travel', {
    weight: 26,
    usd: [15, 160],
    merchants: [
      m('BiTaksi', 'TRY', 'Taxi to client meeting | Havalimanı taksi', 'Taxi fare | Bridge toll'),
      m(
        'Türk Hava Yolları',
        'TRY',
        'Flight to the Ankara office | İzmir fuarı uçuşu',
        'Flight ticket | Extra baggage | Seat selection | Meal upgrade | Lounge access',
      ),
      m('İSPARK', 'TRY', 'Parking at customer site', 'Parking fee'),
      m('Deutsche Bahn', 'EUR', 'Zug München–Frankfurt', 'ICE ticket | Seat reservation'),
      m('SNCF Connect', 'EUR', 'TGV Paris–Lyon', 'TGV ticket | Seat reservation'),
      m('Renfe', 'EUR', 'AVE Madrid–Barcelona', 'AVE ticket | Seat reservation'),
      m('Uber', 'USD', 'Ride to JFK | Ride to the client office', 'Ride fare | Tip | Airport fee'),
      m('Delta Air Lines', 'USD', 'Flight to the Boston office', 'Flight ticket | Bag fee'),
    ],
  }),
  demoCategory('Meals & Entertainment', {
    weight: 20,
    usd: [9, 90],
    merchants: [
      m('Köfteci Yusuf', 'TRY', 'Team lunch | Ekip yemeği', 'Köfte menu | Ayran | Salad | Dessert'),
      m('Kahve Dünyası', 'TRY', 'Coffee with a candidate', 'Türk kahvesi | Latte | Cheesecake'),
      m('Çiya Sofrası', 'TRY', 'Client dinner', 'Starters | Kebab | Künefe | Drinks | Çay'),
      m('Café de Flore', 'EUR', 'Petit-déjeuner d’affaires', 'Café crème | Croissant | Omelette'),
      m('Brauhaus Früh am Dom', 'EUR', 'Messeabend Köln', 'Kölsch | Schnitzel | Apfelstrudel'),
      m('Casa Lucio', 'EUR', 'Cena con cliente', 'Huevos rotos | Vino | Postre'),
      m('Starbucks', 'USD', 'Coffee with a candidate', 'Latte | Bagel | Muffin | Cold brew'),
    ],
  }),
  demoCategory('Accommodation', {
    weight: 10,
    usd: [120, 480],
    merchants: [
      m('Hilton İstanbul Bomonti', 'TRY', 'Hotel for the offsite', 'Room | Breakfast | City tax'),
      m('Swissôtel Büyük Efes', 'TRY', 'Hotel, İzmir fair', 'Room | Breakfast | Minibar'),
      m('Motel One München', 'EUR', 'Hotel, Munich customer visit', 'Room | Breakfast'),
      m('Hôtel Mercure Lyon Centre', 'EUR', 'Hôtel, Lyon', 'Room | Breakfast | Taxe de séjour'),
      m('Marriott Marquis', 'USD', 'Hotel, New York trade show', 'Room | Resort fee | Parking'),
    ],
  }),
  demoCategory('Office Supplies', {
    weight: 11,
    usd: [5, 120],
    merchants: [
      m(
        'Teknosa',
        'TRY',
        'USB-C hub and cables | Kablosuz mouse',
        'USB-C hub | HDMI cable | Wireless mouse | Keyboard | Webcam',
      ),
      m('D&R', 'TRY', 'Books for the team library', 'Book | Notebook | Pens'),
      m('Saturn', 'EUR', 'Headset for remote calls', 'Headset | Webcam | Batteries'),
      m('Fnac', 'EUR', 'Livres pour l’équipe', 'Livre | Carnet'),
      m(
        'Amazon.com',
        'USD',
        'Docking station | Monitor cables',
        'Docking station | DisplayPort cable | Keyboard | Mouse | Desk lamp | Notebook',
      ),
    ],
  }),
  {
    name: 'Groceries & Kitchen',
    description: 'Tea, coffee and snacks for the office kitchen.',
    requiresReceipt: false,
    maxAmount: 2500,
    active: true,
    weight: 12,
    range: { TRY: [80, 2400], EUR: [6, 70], USD: [6, 80] },
    merchants: [
      m(
        'Migros',
        'TRY',
        'Office kitchen supplies | Mutfak alışverişi',
        'Çay 1 kg | Su 0,5 L | Simit | Peynir | Ayran | Meyve',
      ),
      m('Şok Market', 'TRY', 'Snacks for the sprint review', 'Bisküvi | Su | Kahve | Çikolata'),
      m('BİM', 'TRY', 'Tea and sugar', 'Çay | Şeker | Peçete'),
      m('REWE', 'EUR', 'Obst für das Büro', 'Äpfel | Bananen | Kaffee | Milch | Mineralwasser'),
      m('Carrefour', 'EUR', 'Courses pour la cuisine', 'Café | Sucre | Biscuits | Eau'),
      m('Whole Foods Market', 'USD', 'Snacks for the team', 'Fruit | Coffee | Granola | Juice'),
    ],
  },
  demoCategory('Training & Conferences', {
    weight: 6,
    usd: [40, 1800],
    merchants: [
      m('Udemy', 'TRY', 'Online course', 'Course licence'),
      m('Boğaziçi Üniversitesi BÜYEM', 'TRY', 'Sertifika programı', 'Tuition | Materials'),
      m('WeAreDevelopers', 'EUR', 'World Congress ticket', 'Conference ticket | Workshop'),
      m('AWS re:Invent', 'USD', 're:Invent Las Vegas', 'Conference pass | Bootcamp'),
    ],
  }),
  demoCategory('Mobile & Internet', {
    weight: 10,
    usd: [10, 25],
    merchants: [
      m('Turkcell', 'TRY', 'Mobile phone bill | Fatura', 'Monthly plan | Roaming package'),
      m('Türk Telekom', 'TRY', 'Home internet for remote work', 'Fibre internet | Modem rental'),
      m('Deutsche Telekom', 'EUR', 'Roaming data package', 'Data package'),
      m('T-Mobile', 'USD', 'International roaming pass', 'Roaming pass | Data add-on'),
    ],
  }),
  // Retired in the demo's list: only older expenses use it.
  demoCategory('Fuel (retired)', {
    weight: 5,
    usd: [30, 90],
    merchants: [
      m('Opet', 'TRY', 'Fuel for customer visits', 'Fuel | Car wash'),
      m('Petrol Ofisi', 'TRY', 'Yakıt', 'Fuel | Windscreen fluid'),
      m('Aral', 'EUR', 'Tanken Mietwagen', 'Fuel'),
      m('Shell', 'USD', 'Fuel for the rental car', 'Fuel | Snacks'),
    ],
  }),
];
