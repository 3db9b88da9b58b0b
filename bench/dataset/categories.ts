import { list } from '../../src/demo/random.ts';

/**
 * Expense categories and their merchants. Built on the demo's (src/demo/expenses.ts, which does
 * not export them), with US-dollar merchants and a groceries category added.
 */

export type Currency = 'TRY' | 'EUR' | 'USD';

export interface Merchant {
  name: string;
  currency: Currency;
  titles: readonly string[];
  items: readonly string[];
}

export interface CategorySpec {
  name: string;
  description: string | null;
  requiresReceipt: boolean;
  /** Limit per expense in TRY, or null for none. */
  maxAmount: number | null;
  active: boolean;
  weight: number;
  /** Amount ranges in whole currency units. */
  range: Record<Currency, readonly [number, number]>;
  merchants: readonly Merchant[];
}

/** A merchant in one line: titles and item names are `|`-separated lists. */
const m = (name: string, currency: Currency, titles: string, items: string): Merchant => ({
  name,
  currency,
  titles: list(titles),
  items: list(items),
});

export const CATEGORIES: readonly CategorySpec[] = [
  {
    name: 'Travel',
    description: 'Flights, trains, taxis and parking on business trips.',
    requiresReceipt: true,
    maxAmount: 5000,
    active: true,
    weight: 26,
    range: { TRY: [150, 4800], EUR: [12, 140], USD: [15, 160] },
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
  },
  {
    name: 'Meals & Entertainment',
    description: 'Client meals and team events; list the attendees.',
    requiresReceipt: true,
    maxAmount: 1500,
    active: true,
    weight: 20,
    range: { TRY: [90, 1450], EUR: [8, 80], USD: [9, 90] },
    merchants: [
      m('Köfteci Yusuf', 'TRY', 'Team lunch | Ekip yemeği', 'Köfte menu | Ayran | Salad | Dessert'),
      m('Kahve Dünyası', 'TRY', 'Coffee with a candidate', 'Türk kahvesi | Latte | Cheesecake'),
      m('Çiya Sofrası', 'TRY', 'Client dinner', 'Starters | Kebab | Künefe | Drinks | Çay'),
      m('Café de Flore', 'EUR', 'Petit-déjeuner d’affaires', 'Café crème | Croissant | Omelette'),
      m('Brauhaus Früh am Dom', 'EUR', 'Messeabend Köln', 'Kölsch | Schnitzel | Apfelstrudel'),
      m('Casa Lucio', 'EUR', 'Cena con cliente', 'Huevos rotos | Vino | Postre'),
      m('Starbucks', 'USD', 'Coffee with a candidate', 'Latte | Bagel | Muffin | Cold brew'),
    ],
  },
  {
    name: 'Accommodation',
    description: null,
    requiresReceipt: true,
    maxAmount: null,
    active: true,
    weight: 10,
    range: { TRY: [2200, 14500], EUR: [90, 420], USD: [120, 480] },
    merchants: [
      m('Hilton İstanbul Bomonti', 'TRY', 'Hotel for the offsite', 'Room | Breakfast | City tax'),
      m('Swissôtel Büyük Efes', 'TRY', 'Hotel, İzmir fair', 'Room | Breakfast | Minibar'),
      m('Motel One München', 'EUR', 'Hotel, Munich customer visit', 'Room | Breakfast'),
      m('Hôtel Mercure Lyon Centre', 'EUR', 'Hôtel, Lyon', 'Room | Breakfast | Taxe de séjour'),
      m('Marriott Marquis', 'USD', 'Hotel, New York trade show', 'Room | Resort fee | Parking'),
    ],
  },
  {
    name: 'Office Supplies',
    description: 'Small equipment and stationery under 10,000 TRY.',
    requiresReceipt: true,
    maxAmount: null,
    active: true,
    weight: 11,
    range: { TRY: [60, 3200], EUR: [5, 90], USD: [5, 120] },
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
  },
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
  {
    name: 'Training & Conferences',
    description: 'Courses, certifications and conference tickets agreed with your manager.',
    requiresReceipt: true,
    maxAmount: null,
    active: true,
    weight: 6,
    range: { TRY: [450, 24000], EUR: [40, 900], USD: [40, 1800] },
    merchants: [
      m('Udemy', 'TRY', 'Online course', 'Course licence'),
      m('Boğaziçi Üniversitesi BÜYEM', 'TRY', 'Sertifika programı', 'Tuition | Materials'),
      m('WeAreDevelopers', 'EUR', 'World Congress ticket', 'Conference ticket | Workshop'),
      m('AWS re:Invent', 'USD', 're:Invent Las Vegas', 'Conference pass | Bootcamp'),
    ],
  },
  {
    name: 'Mobile & Internet',
    description: 'Work share of phone and home internet bills.',
    requiresReceipt: false,
    maxAmount: 750,
    active: true,
    weight: 10,
    range: { TRY: [180, 740], EUR: [10, 20], USD: [10, 25] },
    merchants: [
      m('Turkcell', 'TRY', 'Mobile phone bill | Fatura', 'Monthly plan | Roaming package'),
      m('Türk Telekom', 'TRY', 'Home internet for remote work', 'Fibre internet | Modem rental'),
      m('Deutsche Telekom', 'EUR', 'Roaming data package', 'Data package'),
      m('T-Mobile', 'USD', 'International roaming pass', 'Roaming pass | Data add-on'),
    ],
  },
  {
    // Retired when the company moved to fleet fuel cards: only older expenses use it.
    name: 'Fuel (retired)',
    description: 'Replaced by fleet fuel cards.',
    requiresReceipt: false,
    maxAmount: 3000,
    active: false,
    weight: 5,
    range: { TRY: [600, 2900], EUR: [40, 95], USD: [30, 90] },
    merchants: [
      m('Opet', 'TRY', 'Fuel for customer visits', 'Fuel | Car wash'),
      m('Petrol Ofisi', 'TRY', 'Yakıt', 'Fuel | Windscreen fluid'),
      m('Aral', 'EUR', 'Tanken Mietwagen', 'Fuel'),
      m('Shell', 'USD', 'Fuel for the rental car', 'Fuel | Snacks'),
    ],
  },
];
