import { extractFromLayout, proposeSchema } from '../../../../src/engines/extract';
import { layoutOf } from './layout-builder';

describe('proposeSchema', () => {
  const layout = layoutOf([
    'SUNRISE DENTAL CLINIC SDN BHD',
    '22 JALAN MEWAH, 50450 KUALA LUMPUR',
    'Patient Name: Tan Mei Ling',
    'Visit Date: 12/09/2022 Receipt No: R-8841',
    'Email: mei.tan@example.com',
    'Visits: 3',
    [
      [20, 'Description'],
      [400, 'Qty'],
      [600, 'Amount'],
    ],
    [
      [20, 'Scaling'],
      [400, '1'],
      [600, '120.00'],
    ],
    'Total 120.00',
  ]);

  it('turns label: value pairs into typed properties, summary amounts into numbers and a table into an array', () => {
    expect(proposeSchema(layout)).toEqual({
      type: 'object',
      title: 'ProposedSchema',
      properties: {
        issuer_name: { type: ['string', 'null'], description: 'Name of the issuer, as printed' },
        issuer_address: { type: ['string', 'null'], description: 'Address of the issuer, as printed' },
        patient_name: { type: ['string', 'null'], description: '"Patient Name" as printed' },
        visit_date: { type: ['string', 'null'], format: 'date', description: '"Visit Date" as printed' },
        receipt_no: { type: ['string', 'null'], description: '"Receipt No" as printed' },
        email: { type: ['string', 'null'], format: 'email', description: '"Email" as printed' },
        visits: { type: ['integer', 'null'], description: '"Visits" as printed' },
        total: { type: ['number', 'null'], description: 'The total amount' },
        items: {
          type: 'array',
          description: 'Rows of the table',
          items: {
            type: 'object',
            properties: {
              description: { type: ['string', 'null'] },
              quantity: { type: ['number', 'null'] },
              amount: { type: ['number', 'null'] },
            },
          },
        },
      },
    });
  });

  it('proposes a schema the extractor can fill back from the same page', () => {
    const { data } = extractFromLayout(layout, proposeSchema(layout), {});
    expect(data).toMatchObject({
      issuer_name: 'SUNRISE DENTAL CLINIC SDN BHD',
      patient_name: 'Tan Mei Ling',
      visit_date: '2022-09-12',
      receipt_no: 'R-8841',
      email: 'mei.tan@example.com',
      visits: 3,
      total: 120,
      items: [{ description: 'Scaling', quantity: 1, amount: 120 }],
    });
  });

  it('proposes an empty object schema for an empty page', () => {
    expect(proposeSchema({ pages: [] })).toEqual({ type: 'object', title: 'ProposedSchema', properties: {} });
  });
});
