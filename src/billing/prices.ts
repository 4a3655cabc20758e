/**
 * The price list, in integer micro-dollars, in one place so billing and the checks that guard
 * billable operations agree.
 */

/** One minute of a voice call (inbound or outbound). */
export const CALL_PRICE_PER_MINUTE_MICROS = 100_000; // $0.10

/** One user message in a `widget` chat conversation (`test` conversations are free). */
export const WIDGET_MESSAGE_PRICE_MICROS = 10_000; // $0.01

/**
 * "Sufficient balance" to start a campaign: enough for at least one minute of calling. The spec
 * leaves the threshold open; a lower bar would start campaigns that fail on their first call.
 */
export const CAMPAIGN_START_MIN_BALANCE_MICROS = CALL_PRICE_PER_MINUTE_MICROS;

/** One reply generated through POST /user/ai/generate-reply: priced like a widget message. */
export const GENERATE_REPLY_PRICE_MICROS = WIDGET_MESSAGE_PRICE_MICROS; // $0.01

/** One outgoing WhatsApp session (freeform) message, sent by send-freeform or as an AI reply. */
export const WHATSAPP_FREEFORM_PRICE_MICROS = 5_000; // $0.005
