import { describe, expect, it } from 'vitest';
import { parseLeadsCsv, splitCsvLine } from '../../../console/src/campaigns/leads-csv.ts';

describe('parseLeadsCsv (campaign leads upload)', () => {
  it('reads a header with phone_number and turns the other columns into variables', () => {
    expect(parseLeadsCsv('phone_number,customer_name,company\n+14155550101,Ana,"Acme, Inc."\n+1 (415) 555-0102,,Globex\n')).toEqual({
      leads: [
        { phone_number: '+14155550101', variables: { customer_name: 'Ana', company: 'Acme, Inc.' } },
        { phone_number: '+14155550102', variables: { company: 'Globex' } },
      ],
      problems: [],
    });
  });
  it('takes bare lines of numbers without a header, and names the lines it refuses', () => {
    expect(parseLeadsCsv('+14155550101\n\nnot-a-number\n+14155550103')).toEqual({
      leads: [{ phone_number: '+14155550101' }, { phone_number: '+14155550103' }],
      problems: [{ line: 3, message: '“not-a-number” is not a phone number.' }],
    });
  });
  it('refuses a header without a phone column, and an empty file', () => {
    expect(parseLeadsCsv('name,city\nAna,Paris').problems).toEqual([{ line: 1, message: 'The header has no phone_number column.' }]);
    expect(parseLeadsCsv(' \n').problems[0]!.line).toBe(0);
  });
  it('splits quoted fields with doubled quotes, semicolons and tabs', () => {
    expect(splitCsvLine('"a ""b""",c;d\te')).toEqual(['a "b"', 'c', 'd', 'e']);
  });
});
