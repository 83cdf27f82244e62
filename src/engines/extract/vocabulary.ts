/**
 * The generic word lists the extractor reasons with: label synonyms per field role, legal-entity suffixes, address
 * cues and the "this line is something else" cues that end a header block. Everything here is about documents in
 * general (receipts, invoices, forms), never about a particular merchant; keeping it in one file makes that easy to
 * audit and to extend for another locale.
 */

const list = (phrases: string): readonly string[] => phrases.split('|');

/** Label phrases (lower case, single spaces) that introduce a value of each role. */
export const ROLE_LABELS: Readonly<Record<string, readonly string[]>> = {
  total: list(
    'grand total|total amount|amount due|amount payable|total payable|total due|balance due|net total|nett total|net amt|net amount|total|amount paid|to pay|balance',
  ),
  subtotal: list('subtotal|sub total|sub-total|total excl|total excluding|gross amt|gross amount'),
  tax: list('total gst|total tax|gst amount|tax amount|vat amount|gst|vat|tax|sst|sales tax'),
  discount: list('discount|disc|savings|less'),
  rounding: list('rounding adj|rounding adjustment|rounding|round adj|adj'),
  tendered: list('cash tendered|tendered|tender|cash|received|paid|payment|visa|card'),
  change: list('change due|change|balance returned'),
  tip: list('tip|gratuity|service charge'),
  date: list('date|dated|date of issue|issue date|invoice date|receipt date|tarikh|fecha|datum'),
  time: list('time|masa'),
  phone: list('tel|telephone|phone|ph|mobile|mob|hp|h/p|contact|tel no|phone no'),
  fax: list('fax|facsimile'),
  email: list('email|e-mail|mail'),
  url: list('website|web|www|url'),
  'tax-id': list('gst id|gst reg no|gst reg|gst no|vat no|vat id|vat reg|tax id|sst no|abn|tin'),
  reference: list(
    'invoice no|invoice number|invoice #|inv no|receipt no|receipt #|bill no|doc no|document no|slip no|trans no|transaction no|ticket no|check no|ref no|reference|ref',
  ),
  'issuer-name': list('from|seller|vendor|merchant|supplier|issued by|company'),
  'customer-name': list('bill to|billed to|sold to|customer|client|buyer|invoice to|ship to'),
  quantity: list('qty|quantity|qnty|units|pcs|count'),
  'unit-price': list('unit price|u.price|u/price|s/price|price|rate|unit cost'),
  'line-amount': list('amount|amt|total|line total|ext price|value'),
  description: list('description|desc|item|items|product|particulars|details|service'),
  'payment-method': list('payment method|payment mode|paid by|payment|tender'),
};

/** Words of a field's name/title/description that point at a role, in priority order (first match wins). */
export const ROLE_TERMS: readonly (readonly [string, readonly string[]])[] = [
  ['subtotal', ['subtotal', 'sub total', 'sub-total', 'net of tax', 'before tax', 'excluding tax']],
  ['tax-id', ['vat id', 'tax id', 'gst id', 'vat number', 'tax number', 'gst number', 'gst reg', 'tin', 'abn', 'ein']],
  ['tip', ['tip', 'gratuity']],
  ['rounding', ['rounding']],
  ['change', ['change given', 'change due', 'change amount']],
  ['tendered', ['tendered', 'amount tendered', 'cash given']],
  ['discount', ['discount', 'savings']],
  ['tax', ['tax', 'vat', 'gst', 'sst']],
  ['unit-price', ['unit price', 'unit cost', 'price per', 'rate', 'unit amount']],
  ['line-amount', ['line total', 'total price', 'line amount', 'amount of the line', 'extended price']],
  ['total', ['total', 'grand total', 'amount due', 'amount paid', 'balance due', 'payable', 'final amount']],
  ['quantity', ['quantity', 'qty', 'count', 'number of items', 'units']],
  ['currency', ['currency']],
  ['payment-method', ['payment method', 'payment type', 'payment mode', 'tender type', 'type of payment']],
  ['email', ['email', 'e-mail', 'mail address']],
  ['url', ['website', 'url', 'web site', 'homepage']],
  ['fax', ['fax']],
  ['phone', ['phone', 'telephone', 'tel', 'mobile', 'contact number']],
  ['postal-code', ['postal code', 'postcode', 'post code', 'zip', 'zip code']],
  ['street', ['street', 'address line', 'street address']],
  ['city', ['city', 'town']],
  ['state', ['state', 'province', 'region']],
  ['country', ['country']],
  ['address', ['address', 'addr', 'location']],
  ['datetime', ['date time', 'datetime', 'timestamp', 'date and time']],
  ['date', ['date', 'dated', 'day', 'issued on']],
  ['time', ['time']],
  ['reference', ['number', 'no', 'num', 'id', 'identifier', 'reference', 'ref', 'code', 'receipt id', 'invoice id']],
  ['amount', ['amount', 'price', 'cost', 'fee', 'sum', 'charge', 'value', 'paid']],
  ['description', ['description', 'desc', 'item', 'product', 'name of the item', 'particulars']],
  ['name', ['name', 'company', 'vendor', 'merchant', 'seller', 'issuer', 'supplier', 'business', 'store', 'shop']],
];

/** Words that make a name/address field the issuer's (seller's) rather than the customer's. */
export const ISSUER_WORDS = list(
  'issuer|issuing|vendor|merchant|seller|supplier|company|business|store|shop|retailer|restaurant|payee|biller|provider|from',
);

/** Words that make a name/address field the customer's. */
export const CUSTOMER_WORDS = list(
  'customer|client|buyer|recipient|purchaser|consignee|billing|bill|shipping|ship|sold|payer',
);

/** Legal-entity suffix tokens (upper case, dots removed): a line carrying one names a company. */
export const LEGAL_SUFFIXES = list(
  'SDN BHD|SDN|BHD|S/B|PLT|LTD|LIMITED|LLC|LLP|INC|CORP|CORPORATION|GMBH|AG|SA|SAS|SARL|BV|NV|PTY|PTE|PLC|KK|SRL|SPA|OY|AB|TBK',
);

/** Words naming a kind of business; weaker than a legal suffix but still a strong hint of a trading name. */
export const BUSINESS_WORDS = list(
  'ENTERPRISE|ENTERPRISES|TRADING|TRADERS|RESTAURANT|RESTORAN|CAFE|KAFE|BAKERY|BAKERIES|HARDWARE|PHARMACY|FARMASI|CLINIC|KLINIK|MART|MINIMARKET|SUPERMARKET|HYPERMARKET|STORE|STORES|SHOP|KEDAI|SYARIKAT|PERNIAGAAN|MARKETING|DISTRIBUTOR|DISTRIBUTORS|INTERNATIONAL|INDUSTRIES|INDUSTRY|HOLDINGS|GROUP|COMPANY|CO|MACHINERY|ENGINEERING|SERVICES|SOLUTIONS|STATIONERY|BOOKSTORE|HOTEL|MOTOR|AUTO|ELECTRICAL|FURNITURE|TEXTILE|FOOD|FOODS|BEVERAGES|NIAGA|CENTRE|CENTER|STATION|PASARAYA|MAKANAN|MINUMAN|KOPITIAM|SUPPLIES|SUPPLY|AGENCY|AGENCIES|BOOKS|BISTRO|GRILL|KITCHEN|MOTORS|OPTICAL|FLORIST|DENTAL|MEDICAL|SALON|LAUNDRY|PRINTING|TRAVEL|BOUTIQUE|GALLERY|EMPORIUM|OUTLET|MARKET',
);

/** Tokens that mark a line as part of a postal address. */
export const ADDRESS_WORDS = list(
  'JALAN|JLN|JL|LORONG|LRG|PERSIARAN|LEBUH|LEBUHRAYA|TAMAN|TMN|BANDAR|KAWASAN|PERINDUSTRIAN|KAMPUNG|KG|SEKSYEN|BATU|LOT|NO|BLOK|BLK|BLOCK|PT|STREET|ST|ROAD|RD|AVENUE|AVE|LANE|LN|DRIVE|BOULEVARD|BLVD|HIGHWAY|HWY|WAY|PLACE|SQUARE|PLAZA|PARK|INDUSTRIAL|ESTATE|SECTION|FLOOR|FLR|LEVEL|SUITE|UNIT|BUILDING|BLDG|TOWER|MALL|COMPLEX|PO BOX|P.O. BOX|STRASSE|RUE|VIA|WISMA|MENARA|KOMPLEKS|PUSAT|BANGUNAN|TINGKAT|ARAS|MEDAN|DATARAN|SIMPANG|PEKAN|DAERAH|MUKIM',
);

/** Country names: the usual last line of an address. */
export const COUNTRY_WORDS = list(
  'MALAYSIA|SINGAPORE|INDONESIA|THAILAND|USA|UK|UNITED KINGDOM|UNITED STATES|AUSTRALIA|CANADA|INDIA|GERMANY|FRANCE',
);

/** States and territories (with their honorifics): a line made of these continues an address. */
export const STATE_WORDS = list(
  'SELANGOR|JOHOR|KEDAH|KELANTAN|MELAKA|MALACCA|NEGERI SEMBILAN|PAHANG|PERAK|PERLIS|PENANG|PULAU PINANG|SABAH|SARAWAK|TERENGGANU|KUALA LUMPUR|PUTRAJAYA|LABUAN|DARUL EHSAN|DARUL TAKZIM|DARUL MAKMUR|DARUL AMAN|DARUL RIDZUAN|DARUL KHUSUS|DARUL NAIM|DARUL HANA|DARUL ISLAM|WILAYAH PERSEKUTUAN',
);

/**
 * Towns and cities of Malaysia (a public gazetteer's larger places, by state, not the development receipts' towns)
 * and Singapore, the locale of the vocabulary above: only used to put right an OCR
 * slip in an address word (`FETALING` → `PETALING`, `SHAH AI AM` → `SHAH ALAM`), never to decide what a line is.
 */
export const CITY_WORDS = list(
  'PETALING JAYA|SHAH ALAM|SUBANG JAYA|JOHOR BAHRU|KLANG|AMPANG|CHERAS|KAJANG|PUCHONG|SERI KEMBANGAN|SEMENYIH|RAWANG|SELAYANG|KEPONG|SETAPAK|DAMANSARA|BANGI|CYBERJAYA|SEPANG|SEREMBAN|NILAI|IPOH|TAIPING|GEORGE TOWN|BUTTERWORTH|ALOR SETAR|SUNGAI PETANI|KOTA BHARU|KUALA TERENGGANU|KUANTAN|KOTA KINABALU|SANDAKAN|KUCHING|MIRI|SIBU|BINTULU|SKUDAI|MASAI|PASIR GUDANG|KLUANG|BATU PAHAT|MUAR|SEGAMAT|KULAI|SHAH ALAM|BUKIT MERTAJAM|SERDANG|SUNGAI BULOH|BALAKONG|BANTING|TELUK INTAN|PORT DICKSON|SINGAPORE|' +
    'KANGAR|KULIM|LANGKAWI|SEBERANG PERAI|BAYAN LEPAS|NIBONG TEBAL|LUMUT|SITIAWAN|KAMPAR|BATU GAJAH|TAPAH|TANJUNG MALIM|' +
    'KUALA SELANGOR|PORT KLANG|JENJAROM|SALAK TINGGI|BERANANG|KUALA PILAH|TAMPIN|GEMAS|ALOR GAJAH|JASIN|AYER KEROH|' +
    'TANGKAK|PONTIAN|KOTA TINGGI|MERSING|YONG PENG|ISKANDAR PUTERI|GELANG PATAH|TEMERLOH|BENTONG|RAUB|JERANTUT|' +
    'KUALA LIPIS|CHUKAI|KEMAMAN|DUNGUN|PASIR MAS|TUMPAT|TANAH MERAH|GUA MUSANG|TAWAU|LAHAD DATU|KENINGAU|SEMPORNA|' +
    'PENAMPANG|PUTATAN|SRI AMAN|KAPIT|SARIKEI|LIMBANG|MUKAH|SAMARAHAN|KOTA SAMARAHAN|PUTRA HEIGHTS',
);

/** Generic parts of Malay place names, each spelt more than one way (`TANJUNG`/`TANJONG`, `SUNGAI`/`SUNGEI`). */
export const PLACE_ELEMENTS = list(
  'TANJUNG|TANJONG|SUNGAI|SUNGEI|BUKIT|KUALA|PULAU|TELUK|TELOK|PASIR|KAMPUNG|KAMPONG|BANDAR|PENGKALAN|PANGKALAN|SIMPANG|LEMBAH|PADANG|PERMATANG',
);

/** Region and country words. */
export const REGION_WORDS = [...COUNTRY_WORDS, ...STATE_WORDS];

/** Words of greetings and footers: a line with one is not a business name. */
export const COURTESY_WORDS = list('THANK|THANKS|WELCOME|PLEASE|VISIT|AGAIN|COPY|DUPLICATE|REPRINT|SELAMAT|TERIMA');

/** Words of a branch, outlet or staff label under a business name (`BRANCH: ...`, `OUTLET ...`, `CASHIER ...`). */
export const BRANCH_WORDS = list('BRANCH|OUTLET|CAWANGAN|CASHIER|COUNTER|KAUNTER|STAFF|SERVER|OPERATOR|TERMINAL|POS');

/** Cues that a line is contact or registration data, a document title or body text: it ends an address block. */
export const STOP_CUES = list(
  'TEL|TELEPHONE|PHONE|FAX|H/P|HP|MOBILE|EMAIL|E-MAIL|WWW|HTTP|GST|VAT|SST|TAX|INVOICE|RECEIPT|REG|REGISTRATION|CO NO|CO REG|COMPANY NO|ROC|ABN|CASHIER|DATE|TIME|TABLE|BILL|ORDER|SHOPPING HOURS|OPENING HOURS',
);
