import {
  findAmounts,
  findDates,
  findPhones,
  isoDate,
  parseNumber,
} from '../../../../src/engines/extract/value-patterns';

describe('value patterns', () => {
  it('reads dates day first, in the printed form, with a following time', () => {
    const dates = findDates('Date: 09/03/2018 13:05 Exp 2019-12-31 and 10 May 2018 and Mar 5, 2021');
    expect(dates.map((d) => [d.text, isoDate(d.value), d.value.time ?? null])).toEqual([
      ['09/03/2018', '2018-03-09', '13:05:00'],
      ['2019-12-31', '2019-12-31', null],
      ['10 May 2018', '2018-05-10', null],
      ['Mar 5, 2021', '2021-03-05', null],
    ]);
  });

  it('rejects impossible dates and amounts that only look like dates', () => {
    expect(findDates('31/02/2018 12.50 19/u2/2017 1 MARKET 2018')).toEqual([]);
    expect(findDates('14-08-17').map((d) => isoDate(d.value))).toEqual(['2017-08-14']);
  });

  it('finds money amounts with their printed form and parsed value', () => {
    const found = findAmounts('2 x 8.50 17.00 RM1.00 $10.30 50,00 -0.04 GBP 1,453.20 RM 12');
    expect(found.map((a) => [a.text, a.value.value, a.value.currency ?? null])).toEqual([
      ['8.50', 8.5, null],
      ['17.00', 17, null],
      ['RM1.00', 1, 'RM'],
      ['$10.30', 10.3, '$'],
      ['50.00', 50, null],
      ['-0.04', -0.04, null],
      ['1,453.20', 1453.2, 'GBP'],
      ['12', 12, 'RM'],
    ]);
  });

  it('does not read amounts out of longer numbers, dates or ids', () => {
    expect(findAmounts('12.502 09.03.2018 INV-2024.001 1,234')).toEqual([]);
  });

  it('parses printed numbers in both decimal conventions', () => {
    expect([
      parseNumber('1,234.50'),
      parseNumber('1.234,50'),
      parseNumber('(12.00)'),
      parseNumber('7'),
      parseNumber('x'),
    ]).toEqual([1234.5, 1234.5, -12, 7, undefined]);
  });

  it('finds phone numbers of 7 to 15 digits', () => {
    expect(findPhones('TEL 07-5547360 FAX: +44 20 7946 0958 GST 12').map((p) => p.text)).toEqual([
      '07-5547360',
      '+44 20 7946 0958',
    ]);
  });
});
