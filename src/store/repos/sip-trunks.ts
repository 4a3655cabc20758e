import { SRTP_POLICIES, type SrtpPolicy } from '../../media/srtp/sdes.ts';
import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import type { SecretBox } from '../secrets.ts';
import { flag, fromJson, toJson } from '../json.ts';
import { stopCampaignsUsing, unbindAssistants } from '../references.ts';
import type { CallingFormat, SipTrunkTransport, StoredTrunkSource, TrunkIds, TrunkSpec } from '../../sip/trunk-registry.ts';

/** A stored SIP trunk as the API shows it: never the password. */
export interface SipTrunk {
  id: number;
  accountId: number;
  sipTrunkType: 'extension' | 'number';
  phoneNumber: string;
  nickname: string | null;
  sipUsername: string;
  sipAddress: string;
  sipCallingFormat: CallingFormat;
  inboundAuthorizationType: 'auth' | 'ip';
  allowedInboundIps: string[] | null;
  outboundProxy: boolean;
  /** Learn a call's RTP source behind NAT even where the SDP names a public address (src/media/source-filter.ts). */
  mediaNat: boolean;
  countryCode: string;
  /** Beside the spec's fields: the transport the trunk must use; null lets DNS choose (RFC 3263). */
  transport: SipTrunkTransport | null;
  /** SDES-SRTP policy for this trunk's calls. */
  srtp: SrtpPolicy;
  inboundTrunkId: string;
  outboundTrunkId: string;
  /** The phone_numbers row created with the trunk (what assistants take as phone_number_id). */
  phoneNumberId: number | null;
  createdAt: number;
  updatedAt: number;
}

export type NewSipTrunk = Omit<SipTrunk, 'id' | 'inboundTrunkId' | 'outboundTrunkId' | 'phoneNumberId' | 'createdAt' | 'updatedAt'> & {
  /** Clear text; sealed before it is stored. */
  sipPassword: string;
};

type Row = {
  id: number;
  account_id: number;
  sip_trunk_type: string;
  phone_number: string;
  nickname: string | null;
  sip_username: string;
  sip_password_enc: string;
  sip_address: string;
  sip_calling_format: string;
  inbound_authorization_type: string;
  allowed_inbound_ips: string | null;
  outbound_proxy: number;
  media_nat: number;
  country_code: string;
  transport: string | null;
  srtp: string;
  inbound_trunk_id: string;
  outbound_trunk_id: string;
  created_at: number;
  updated_at: number;
};

/** A violation of the (phone_number, sip_username, sip_address) unique index, on either backend. */
export { isUniqueViolation } from '../dialect.ts';

export class SipTrunksRepo implements StoredTrunkSource {
  constructor(private readonly store: Store, private readonly clock: Clock, private readonly secrets: SecretBox) {}

  /** Whether any account has a trunk with this number, username and address (the spec's duplicate). */
  async exists(phoneNumber: string, sipUsername: string, sipAddress: string): Promise<boolean> {
    const row = await this.store.db
      .selectFrom('sip_trunks')
      .select('id')
      .where('phone_number', '=', phoneNumber)
      .where('sip_username', '=', sipUsername)
      .where('sip_address', '=', sipAddress)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Saves the trunk and its phone number record in one transaction. Throws on a duplicate. */
  async create(input: NewSipTrunk, ids: TrunkIds): Promise<SipTrunk> {
    const now = this.clock.now();
    return this.store.db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('sip_trunks')
        .values({
          account_id: input.accountId,
          sip_trunk_type: input.sipTrunkType,
          phone_number: input.phoneNumber,
          nickname: input.nickname,
          sip_username: input.sipUsername,
          sip_password_enc: this.secrets.seal(input.sipPassword),
          sip_address: input.sipAddress,
          sip_calling_format: input.sipCallingFormat,
          inbound_authorization_type: input.inboundAuthorizationType,
          allowed_inbound_ips: input.allowedInboundIps ? toJson(input.allowedInboundIps) : null,
          outbound_proxy: flag(input.outboundProxy),
          media_nat: flag(input.mediaNat),
          country_code: input.countryCode,
          transport: input.transport,
          srtp: input.srtp,
          inbound_trunk_id: ids.inboundTrunkId,
          outbound_trunk_id: ids.outboundTrunkId,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const phone = await trx
        .insertInto('phone_numbers')
        .values({ account_id: input.accountId, phone_number: input.phoneNumber, type: 'sip_trunk', sip_trunk_id: row.id, created_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      return toTrunk(row, phone.id);
    });
  }

  async get(accountId: number, id: number): Promise<SipTrunk | undefined> {
    return (await this.query(accountId, id))[0];
  }

  async list(accountId: number): Promise<SipTrunk[]> {
    return this.query(accountId);
  }

  private async query(accountId: number, id?: number): Promise<SipTrunk[]> {
    let q = this.store.db
      .selectFrom('sip_trunks as t')
      .selectAll('t')
      .select((eb) =>
        eb.selectFrom('phone_numbers as p').select('p.id').whereRef('p.sip_trunk_id', '=', 't.id').orderBy('p.id').limit(1).as('phone_number_id'),
      )
      .where('t.account_id', '=', accountId);
    if (id !== undefined) q = q.where('t.id', '=', id);
    const rows = await q.orderBy('t.id').execute();
    return rows.map((r) => toTrunk(r, r.phone_number_id ?? null));
  }

  /**
   * Deletes the trunk with its phone number, in one transaction with what that changes elsewhere:
   * assistants using the number lose it, campaigns in progress calling from it are stopped
   * (src/store/references.ts). Returns what was deleted and the campaigns it stopped.
   */
  async delete(accountId: number, id: number): Promise<{ trunk: SipTrunk; stoppedCampaignIds: number[] } | undefined> {
    const trunk = await this.get(accountId, id);
    if (!trunk) return undefined;
    const stoppedCampaignIds = await this.store.db.transaction().execute(async (trx) => {
      const numbers = (await trx.selectFrom('phone_numbers').select('id').where('account_id', '=', accountId).where('sip_trunk_id', '=', id).execute()).map((r) => r.id);
      const now = this.clock.now();
      await unbindAssistants(trx, accountId, { phoneNumbers: new Set(numbers) }, now);
      const stopped = await stopCampaignsUsing(trx, accountId, { phoneNumberIds: numbers }, now);
      await trx.deleteFrom('phone_numbers').where('account_id', '=', accountId).where('sip_trunk_id', '=', id).execute();
      await trx.deleteFrom('sip_trunks').where('account_id', '=', accountId).where('id', '=', id).execute();
      return stopped;
    });
    return { trunk, stoppedCampaignIds };
  }

  /** Every stored trunk with its clear password, for re-provisioning on start. */
  async allForProvisioning(): Promise<Array<{ sipTrunkId: number; ids: TrunkIds; spec(): TrunkSpec }>> {
    const rows = await this.store.db.selectFrom('sip_trunks').selectAll().orderBy('id').execute();
    return rows.map((row) => ({
      sipTrunkId: row.id,
      ids: { inboundTrunkId: row.inbound_trunk_id, outboundTrunkId: row.outbound_trunk_id },
      spec: () => specOf(toTrunk(row, null), this.secrets.open(row.sip_password_enc)),
    }));
  }

  /** The trunk behind a provisioned inbound trunk id, with its clear password (for the SIP layer). */
  async getByInboundTrunkId(inboundTrunkId: string): Promise<{ trunk: SipTrunk; password: string } | undefined> {
    const row = await this.store.db.selectFrom('sip_trunks').selectAll().where('inbound_trunk_id', '=', inboundTrunkId).executeTakeFirst();
    if (!row) return undefined;
    const phone = await this.store.db.selectFrom('phone_numbers').select('id').where('sip_trunk_id', '=', row.id).executeTakeFirst();
    return { trunk: toTrunk(row, phone?.id ?? null), password: this.secrets.open(row.sip_password_enc) };
  }
}

/** The registry's view of a trunk. */
export function specOf(trunk: Omit<NewSipTrunk, 'sipPassword'> & { id: number | null }, password: string): TrunkSpec {
  return {
    id: trunk.id,
    accountId: trunk.accountId,
    trunkType: trunk.sipTrunkType,
    phoneNumber: trunk.phoneNumber,
    username: trunk.sipUsername,
    password,
    address: trunk.sipAddress,
    callingFormat: trunk.sipCallingFormat,
    authType: trunk.inboundAuthorizationType,
    allowedIps: trunk.allowedInboundIps,
    outboundProxy: trunk.outboundProxy,
    mediaNat: trunk.mediaNat,
    countryCode: trunk.countryCode,
    ...(trunk.transport ? { transport: trunk.transport } : {}),
    srtp: trunk.srtp,
  };
}

function toTrunk(row: Row, phoneNumberId: number | null): SipTrunk {
  return {
    id: row.id,
    accountId: row.account_id,
    sipTrunkType: row.sip_trunk_type as SipTrunk['sipTrunkType'],
    phoneNumber: row.phone_number,
    nickname: row.nickname,
    sipUsername: row.sip_username,
    sipAddress: row.sip_address,
    sipCallingFormat: row.sip_calling_format as CallingFormat,
    inboundAuthorizationType: row.inbound_authorization_type as SipTrunk['inboundAuthorizationType'],
    allowedInboundIps: row.allowed_inbound_ips === null ? null : fromJson<string[]>(row.allowed_inbound_ips, []),
    outboundProxy: row.outbound_proxy === 1,
    mediaNat: row.media_nat === 1,
    srtp: asSrtpPolicy(row.srtp),
    countryCode: row.country_code,
    transport: (row.transport as SipTrunkTransport | null) ?? null,
    inboundTrunkId: row.inbound_trunk_id,
    outboundTrunkId: row.outbound_trunk_id,
    phoneNumberId,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function asSrtpPolicy(value: string): SrtpPolicy {
  return (SRTP_POLICIES as readonly string[]).includes(value) ? (value as SrtpPolicy) : 'off';
}
