import { z } from 'zod';
import { idParams, type Api } from '../route.ts';
import { addError, throwIfErrors } from '../validation.ts';
import type { AppContext } from '../../context.ts';
import { isUniqueViolation, specOf, type NewSipTrunk, type SipTrunk } from '../../store/repos/sip-trunks.ts';
import type { TrunkIds } from '../../sip/trunk-registry.ts';
import { iso } from '../../store/json.ts';
import { detectCountry, isE164, normalizeCountryCode } from '../../util/phone.ts';
import { isIpOrCidr, isSipHost } from '../../util/ip.ts';
import { AppError, ConflictError, NotFoundError } from '../../util/errors.ts';
import { stopRunningCampaigns } from '../stop-campaigns.ts';
import { messageOnly, timestamp, withData } from '../response-schemas.ts';

/**
 * SIP trunks (the spec's "create SIP trunk"). Creation provisions first and saves second: a
 * provisioning failure saves nothing (500), a save failure undoes the provisioning. The password
 * is sealed at rest and appears in no answer or log line.
 */

const body = z.object({
  sip_trunk_type: z.enum(['extension', 'number']),
  phone_number: z.string().trim().min(1).max(16),
  nickname: z.string().max(50).nullish(),
  sip_username: z.string().min(3).max(128),
  sip_password: z.string().min(3).max(256),
  sip_address: z.string().trim().min(1).max(253),
  sip_calling_format: z.enum(['+e164', 'e164', 'national']),
  inbound_authorization_type: z.enum(['auth', 'ip']),
  allowed_inbound_ips: z.array(z.string()).max(100).nullish(),
  country_code: z.string().nullish(),
  outbound_proxy: z.boolean().default(false),
  /** Beside the spec's fields: the SIP transport the trunk must use (absent: chosen by DNS). */
  transport: z.enum(['udp', 'tcp', 'tls']).nullish(),
  /** Beyond the spec: learn the media source behind NAT even where the SDP names a public address. */
  media_nat: z.boolean().default(false),
  /**
   * SDES-SRTP (an addition to the spec's fields): 'off' keeps plain RTP, 'offered' secures the
   * media when the far end agrees, 'required' refuses calls without SRTP. SDES keys travel in the
   * SDP, so 'required' is accepted only with transport 'tls'.
   */
  srtp: z.enum(['off', 'offered', 'required']).default('off'),
});

/** Extensions are SIP user parts: digits, letters and the few punctuation marks dial plans use. */
const EXTENSION = /^[A-Za-z0-9*#+_.-]{1,15}$/;

type Body = z.output<typeof body>;

/** The rules zod cannot express; returns the normalized trunk or throws 422 with every problem. */
function validate(b: Body, accountId: number, tlsListening: boolean): NewSipTrunk {
  const errors: Record<string, string[]> = {};
  if (b.srtp === 'required' && b.transport !== 'tls') {
    // SDES keys travel in the SDP: in the clear unless the signalling is encrypted.
    addError(errors, 'srtp', 'The srtp field may be required only on a trunk whose transport is tls (SDES keys travel in the SIP signalling).');
  }
  if (b.transport === 'tls' && !tlsListening) {
    // The carrier's calls and in-dialog requests come back to our TLS listener.
    addError(errors, 'transport', 'The transport tls needs this engine to listen for SIP over TLS (set SIP_TLS_CERT and SIP_TLS_KEY).');
  }
  if (b.sip_trunk_type === 'number' && !isE164(b.phone_number)) {
    addError(errors, 'phone_number', 'The phone number field must be an E.164 number (+ and 8 to 15 digits) when the trunk type is number.');
  }
  if (b.sip_trunk_type === 'extension' && !EXTENSION.test(b.phone_number)) {
    addError(errors, 'phone_number', 'The phone number field must be an extension of 1 to 15 characters (letters, digits, * # + _ . -).');
  }
  if (!isSipHost(b.sip_address)) {
    addError(errors, 'sip_address', 'The sip address field must be a host name or IP address without scheme, port or path.');
  }
  let allowed: string[] | null = null;
  if (b.inbound_authorization_type === 'ip') {
    const ips = (b.allowed_inbound_ips ?? []).map((ip) => ip.trim());
    if (ips.length === 0) addError(errors, 'allowed_inbound_ips', 'The allowed inbound ips field is required when the inbound authorization type is ip.');
    ips.forEach((ip, i) => {
      if (!isIpOrCidr(ip)) addError(errors, `allowed_inbound_ips.${i}`, 'Each allowed inbound ip must be a valid IPv4/IPv6 address or CIDR range.');
    });
    allowed = [...new Set(ips)];
  }
  let country: string | undefined;
  if (b.country_code != null && b.country_code !== '') {
    country = normalizeCountryCode(b.country_code);
    if (!country) addError(errors, 'country_code', 'The country code field must be an ISO 3166 country code such as US or GB.');
  } else if (b.sip_trunk_type === 'number') {
    country = detectCountry(b.phone_number);
    if (!country && isE164(b.phone_number)) {
      addError(errors, 'country_code', 'The country code field is required: it could not be detected from the phone number.');
    }
  } else {
    addError(errors, 'country_code', 'The country code field is required.');
  }
  throwIfErrors(errors);
  return {
    accountId,
    sipTrunkType: b.sip_trunk_type,
    phoneNumber: b.phone_number,
    nickname: b.nickname ?? null,
    sipUsername: b.sip_username,
    sipPassword: b.sip_password,
    sipAddress: b.sip_address.replace(/^\[(.+)\]$/, '$1').toLowerCase(),
    sipCallingFormat: b.sip_calling_format,
    inboundAuthorizationType: b.inbound_authorization_type,
    allowedInboundIps: allowed,
    outboundProxy: b.outbound_proxy,
    mediaNat: b.media_nat,
    countryCode: country!,
    transport: b.transport ?? null,
    srtp: b.srtp,
  };
}

const trunkView = z.object({
  id: z.int(),
  sip_trunk_type: z.enum(['extension', 'number']),
  phone_number: z.string(),
  phone_number_id: z.int().nullable().meta({ description: 'The phone number record to assign to an assistant (phone_number_id)' }),
  nickname: z.string().nullable(),
  sip_username: z.string(),
  sip_address: z.string(),
  sip_calling_format: z.enum(['+e164', 'e164', 'national']),
  inbound_authorization_type: z.enum(['auth', 'ip']),
  allowed_inbound_ips: z.array(z.string()).nullable(),
  outbound_proxy: z.boolean(),
  media_nat: z.boolean(),
  country_code: z.string(),
  transport: z.enum(['udp', 'tcp', 'tls']).nullable(),
  srtp: z.enum(['off', 'offered', 'required']),
  inbound_trunk_id: z.string(),
  outbound_trunk_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
});

export function presentTrunk(t: SipTrunk) {
  return {
    id: t.id,
    sip_trunk_type: t.sipTrunkType,
    phone_number: t.phoneNumber,
    phone_number_id: t.phoneNumberId,
    nickname: t.nickname,
    sip_username: t.sipUsername,
    sip_address: t.sipAddress,
    sip_calling_format: t.sipCallingFormat,
    inbound_authorization_type: t.inboundAuthorizationType,
    allowed_inbound_ips: t.allowedInboundIps,
    outbound_proxy: t.outboundProxy,
    media_nat: t.mediaNat,
    country_code: t.countryCode,
    transport: t.transport,
    srtp: t.srtp,
    inbound_trunk_id: t.inboundTrunkId,
    outbound_trunk_id: t.outboundTrunkId,
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
  };
}

/** An error's message with the trunk's password blanked: a provisioner may quote its input. */
function scrub(err: unknown, password: string): string {
  const message = err instanceof Error ? err.message : String(err);
  return password ? message.split(password).join('[redacted]') : message;
}

const DUPLICATE = 'A SIP trunk with this phone number, username and address already exists.';

export function registerSipTrunkRoutes(api: Api, ctx: AppContext): void {
  const tags = ['SIP Trunks'];
  api.route({
    method: 'POST',
    url: '/user/sip-trunks',
    summary: 'Create a SIP trunk (provisions an inbound and an outbound trunk)',
    tags,
    errorStyle: 'trunk',
    body,
    status: 201,
    response: withData(trunkView),
    errors: {
      409: 'A SIP trunk with this phone number, username and address already exists',
      500: 'Provisioning or saving the trunk failed; nothing was saved',
    },
    async handler({ body: b, accountId }) {
      const input = validate(b, accountId, ctx.config.sip.tls?.certFile !== undefined);
      if (await ctx.repos.sipTrunks.exists(input.phoneNumber, input.sipUsername, input.sipAddress)) throw new ConflictError(DUPLICATE);
      const registry = ctx.trunks;
      let ids: TrunkIds;
      try {
        ids = await registry.provision(specOf({ ...input, id: null }, input.sipPassword));
      } catch (err) {
        // Only the message, password blanked: the error of a provisioner might quote its input.
        ctx.logger.error({ accountId, err: scrub(err, input.sipPassword) }, 'SIP trunk provisioning failed');
        throw new AppError('Failed to provision the SIP trunk. Nothing was saved; please try again.', 500, 'SIP_TRUNK_PROVISIONING_FAILED');
      }
      let trunk: SipTrunk;
      try {
        trunk = await ctx.repos.sipTrunks.create(input, ids);
      } catch (err) {
        await registry.deprovision(ids).catch((e: unknown) => ctx.logger.error({ ids, err: scrub(e, input.sipPassword) }, 'SIP trunk rollback failed'));
        // A concurrent create of the same trunk passed the check above and lost at the index.
        if (isUniqueViolation(err)) throw new ConflictError(DUPLICATE);
        ctx.logger.error({ accountId, err: scrub(err, input.sipPassword) }, 'saving SIP trunk failed');
        throw new AppError('Failed to save the SIP trunk.', 500, 'SIP_TRUNK_SAVE_FAILED');
      }
      registry.attach(ids.inboundTrunkId, trunk.id);
      return { message: 'SIP trunk created successfully', data: presentTrunk(trunk) };
    },
  });
  api.route({
    method: 'GET',
    url: '/user/sip-trunks',
    summary: 'List SIP trunks',
    tags,
    response: z.array(trunkView),
    async handler({ accountId }) {
      return (await ctx.repos.sipTrunks.list(accountId)).map(presentTrunk);
    },
  });
  api.route({
    method: 'GET',
    url: '/user/sip-trunks/:id',
    summary: 'Get a SIP trunk',
    tags,
    params: idParams,
    response: trunkView,
    async handler({ params, accountId }) {
      const trunk = await ctx.repos.sipTrunks.get(accountId, params.id);
      if (!trunk) throw new NotFoundError('SIP trunk');
      return presentTrunk(trunk);
    },
  });
  api.route({
    method: 'DELETE',
    url: '/user/sip-trunks/:id',
    summary: 'Delete a SIP trunk and its phone number (deprovisions both trunks; assistants using the number lose it, campaigns in progress from it stop)',
    tags,
    params: idParams,
    response: messageOnly,
    async handler({ params, accountId }) {
      const deleted = await ctx.repos.sipTrunks.delete(accountId, params.id);
      if (!deleted) throw new NotFoundError('SIP trunk');
      const { trunk } = deleted;
      await stopRunningCampaigns(ctx, deleted.stoppedCampaignIds, 'sip trunk deleted');
      // The row is gone either way; a registry that cannot forget it is logged, not fatal.
      await ctx.trunks
        .deprovision({ inboundTrunkId: trunk.inboundTrunkId, outboundTrunkId: trunk.outboundTrunkId })
        .catch((e: unknown) => ctx.logger.error({ sipTrunkId: trunk.id, err: (e as Error).message }, 'SIP trunk deprovisioning failed'));
      return { message: 'SIP trunk deleted successfully' };
    },
  });
}
