/**
 * Phone numbers: E.164 checks and country detection from the calling code. The table is compact
 * on purpose (no libphonenumber dependency): it covers the calling codes we expect trunks from and
 * returns undefined for the rest, so the caller asks for an explicit country_code instead.
 */

/** `+`, then 8 to 15 digits, the first not 0 (E.164 allows at most 15 digits). */
const E164 = /^\+[1-9]\d{7,14}$/;

export function isE164(value: string): boolean {
  return E164.test(value);
}

/**
 * ISO 3166-1 alpha-2 codes (plus XK, widely used for Kosovo). The spec says "ISO 3166-2"; those
 * subdivision codes start with the alpha-2 country code, so we accept both and keep the country.
 */
const ISO_ALPHA2 = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO ' +
    'FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE ' +
    'JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO ' +
    'MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW ' +
    'PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM ' +
    'TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW'
  ).split(' '),
);

/**
 * Normalizes a country code given as ISO 3166-1 alpha-2 (`us`, `GB`) or ISO 3166-2 subdivision
 * (`US-CA`) to the upper-case alpha-2 country; undefined when it is not a known country.
 */
export function normalizeCountryCode(value: string): string | undefined {
  const m = /^([A-Za-z]{2})(?:-[A-Za-z0-9]{1,3})?$/.exec(value.trim());
  if (!m) return undefined;
  const code = m[1]!.toUpperCase();
  return ISO_ALPHA2.has(code) ? code : undefined;
}

/** Calling code → country, for codes shared by one main country. Longest prefix wins. */
const CALLING_CODES: Record<string, string> = {
  '7': 'RU', '20': 'EG', '27': 'ZA', '30': 'GR', '31': 'NL', '32': 'BE', '33': 'FR', '34': 'ES', '36': 'HU',
  '39': 'IT', '40': 'RO', '41': 'CH', '43': 'AT', '44': 'GB', '45': 'DK', '46': 'SE', '47': 'NO', '48': 'PL',
  '49': 'DE', '51': 'PE', '52': 'MX', '53': 'CU', '54': 'AR', '55': 'BR', '56': 'CL', '57': 'CO', '58': 'VE',
  '60': 'MY', '61': 'AU', '62': 'ID', '63': 'PH', '64': 'NZ', '65': 'SG', '66': 'TH', '81': 'JP', '82': 'KR',
  '84': 'VN', '86': 'CN', '90': 'TR', '91': 'IN', '92': 'PK', '93': 'AF', '94': 'LK', '95': 'MM', '98': 'IR',
  '212': 'MA', '213': 'DZ', '216': 'TN', '218': 'LY', '221': 'SN', '225': 'CI', '233': 'GH', '234': 'NG',
  '237': 'CM', '251': 'ET', '254': 'KE', '255': 'TZ', '256': 'UG', '260': 'ZM', '263': 'ZW',
  '351': 'PT', '352': 'LU', '353': 'IE', '354': 'IS', '355': 'AL', '356': 'MT', '357': 'CY', '358': 'FI',
  '359': 'BG', '370': 'LT', '371': 'LV', '372': 'EE', '373': 'MD', '374': 'AM', '375': 'BY', '376': 'AD',
  '377': 'MC', '378': 'SM', '380': 'UA', '381': 'RS', '382': 'ME', '383': 'XK', '385': 'HR', '386': 'SI',
  '387': 'BA', '389': 'MK', '420': 'CZ', '421': 'SK', '423': 'LI',
  '501': 'BZ', '502': 'GT', '503': 'SV', '504': 'HN', '505': 'NI', '506': 'CR', '507': 'PA', '509': 'HT',
  '591': 'BO', '593': 'EC', '595': 'PY', '598': 'UY',
  '852': 'HK', '853': 'MO', '855': 'KH', '856': 'LA', '880': 'BD', '886': 'TW',
  '960': 'MV', '961': 'LB', '962': 'JO', '963': 'SY', '964': 'IQ', '965': 'KW', '966': 'SA', '967': 'YE',
  '968': 'OM', '970': 'PS', '971': 'AE', '972': 'IL', '973': 'BH', '974': 'QA', '975': 'BT', '976': 'MN',
  '977': 'NP', '992': 'TJ', '993': 'TM', '994': 'AZ', '995': 'GE', '996': 'KG', '998': 'UZ',
  // +7 is shared: Kazakhstan uses the 6xx and 7xx ranges.
  '76': 'KZ', '77': 'KZ',
};

/**
 * +1 is the North American Numbering Plan: one calling code, ~25 countries. We resolve the area
 * code for Canada and the larger Caribbean members; every other +1 number is taken as US, which
 * is a guess, so callers with Caribbean numbers not listed here should send country_code.
 */
const NANP_AREAS: Record<string, string> = {
  ...Object.fromEntries(
    (
      '204 226 236 249 250 257 263 289 306 343 354 365 367 368 382 403 416 418 428 431 437 438 450 460 468 474 ' +
      '506 514 519 548 579 581 584 587 604 613 639 647 672 683 705 709 742 753 778 780 782 807 819 825 867 873 ' +
      '879 902 905'
    ).split(' ').map((a) => [a, 'CA']),
  ),
  '787': 'PR', '939': 'PR', '876': 'JM', '658': 'JM', '868': 'TT', '809': 'DO', '829': 'DO', '849': 'DO',
  '242': 'BS', '246': 'BB', '441': 'BM', '345': 'KY', '671': 'GU', '340': 'VI', '284': 'VG', '473': 'GD',
  '758': 'LC', '784': 'VC', '767': 'DM', '869': 'KN', '268': 'AG', '264': 'AI', '721': 'SX', '649': 'TC',
  '664': 'MS', '670': 'MP', '684': 'AS',
};

/** The ISO alpha-2 country of an E.164 number, or undefined when the calling code is not known. */
export function detectCountry(e164: string): string | undefined {
  if (!isE164(e164)) return undefined;
  const digits = e164.slice(1);
  if (digits.startsWith('1')) return NANP_AREAS[digits.slice(1, 4)] ?? 'US';
  for (let len = 3; len >= 1; len--) {
    const hit = CALLING_CODES[digits.slice(0, len)];
    if (hit) return hit;
  }
  return undefined;
}

/** Digits only, for comparing numbers written with and without `+` (SIP user parts vary). */
export function digitsOf(number: string): string {
  return number.replace(/\D/g, '');
}
