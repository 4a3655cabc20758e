/**
 * Chat prices not yet in src/billing/prices.ts (to move there with the lead's next pass).
 * The spec prices only widget messages; the others are our choice, documented in the README.
 */
export { WIDGET_MESSAGE_PRICE_MICROS } from '../billing/prices.ts';
import { WIDGET_MESSAGE_PRICE_MICROS } from '../billing/prices.ts';

/** One generated reply through POST /user/ai/generate-reply: a chat message like a widget one. */
export const GENERATE_REPLY_PRICE_MICROS = WIDGET_MESSAGE_PRICE_MICROS; // $0.01

/** One outgoing WhatsApp session (freeform) message, sent by send-freeform or as an AI reply. */
export const WHATSAPP_FREEFORM_PRICE_MICROS = 5_000; // $0.005
