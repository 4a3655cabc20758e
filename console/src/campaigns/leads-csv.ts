/**
 * Leads pasted or uploaded as CSV: a header row naming the columns, one of them `phone_number`
 * (or `phone`); every other column becomes a variable of the lead (`{{customer_name}}` in the
 * prompt). Without a header, each line is a phone number. Quoted fields may hold commas and "".
 */
export interface Lead {
  phone_number: string;
  variables?: Record<string, string>;
}
export interface ParsedLeads {
  leads: Lead[];
  /** Problems by line (1-based), the file as a whole under 0. */
  problems: Array<{ line: number; message: string }>;
}

export const MAX_LEADS = 10_000;

export function splitCsvLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',' || ch === ';' || ch === '\t') {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

const PHONE = /^\+?[0-9][0-9 ()-]{2,30}$/;

export function parseLeadsCsv(text: string): ParsedLeads {
  const lines = text.split(/\r?\n/).map((l, i) => ({ n: i + 1, cells: splitCsvLine(l) })).filter((l) => l.cells.some((c) => c !== ''));
  const problems: ParsedLeads['problems'] = [];
  if (lines.length === 0) return { leads: [], problems: [{ line: 0, message: 'No leads: paste or choose a CSV file.' }] };
  const head = lines[0]!.cells.map((c) => c.toLowerCase());
  const hasHeader = !PHONE.test(lines[0]!.cells[0] ?? '');
  const phoneCol = hasHeader ? head.findIndex((c) => c === 'phone_number' || c === 'phone') : 0;
  if (hasHeader && phoneCol === -1) return { leads: [], problems: [{ line: 1, message: 'The header has no phone_number column.' }] };
  const names = hasHeader ? lines[0]!.cells : [];
  const leads: Lead[] = [];
  for (const { n, cells } of hasHeader ? lines.slice(1) : lines) {
    const phone = (cells[phoneCol] ?? '').replace(/[ ()-]/g, '');
    if (!PHONE.test(phone)) {
      problems.push({ line: n, message: `“${cells[phoneCol] ?? ''}” is not a phone number.` });
      continue;
    }
    const variables: Record<string, string> = {};
    names.forEach((name, i) => {
      if (i !== phoneCol && name && cells[i] !== undefined && cells[i] !== '') variables[name] = cells[i]!;
    });
    leads.push(Object.keys(variables).length > 0 ? { phone_number: phone, variables } : { phone_number: phone });
  }
  if (leads.length > MAX_LEADS) problems.push({ line: 0, message: `At most ${MAX_LEADS} leads at once (this file has ${leads.length}).` });
  return { leads, problems };
}
