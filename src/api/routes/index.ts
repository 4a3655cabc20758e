import type { Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import { registerAssistantRoutes } from './assistants.ts';
import { registerCatalogRoutes } from './catalog.ts';
import { registerFolderLabelRoutes } from './folders-labels.ts';
import { registerToolRoutes } from './tools.ts';
import { registerKnowledgeBaseRoutes } from './knowledge-bases.ts';
import { registerPhoneNumberRoutes } from './phone-numbers.ts';
import { registerSipTrunkRoutes } from './sip-trunks.ts';
import { registerCampaignRoutes } from './campaigns.ts';
import { registerWhatsappSenderRoutes } from './whatsapp-senders.ts';
import { registerCallRoutes } from './calls.ts';
import { registerCallLiveRoutes } from './calls-live.ts';
import { registerOutboundCallRoutes } from './calls-outbound.ts';
import { registerConversationRoutes } from './conversations.ts';
import { registerGenerateReplyRoutes } from './generate-reply.ts';
import { registerWhatsappRoutes } from './whatsapp.ts';
import { registerInboundWebhookRoutes } from './webhooks-inbound.ts';
import { registerVoicePreviewRoutes } from './voice-previews.ts';
import { registerWebhookSecretRoutes } from './webhook-secret.ts';

/** Every route group, in one list so the OpenAPI document and the app agree. */
export async function registerRoutes(api: Api, ctx: AppContext): Promise<void> {
  registerAssistantRoutes(api, ctx);
  registerCatalogRoutes(api, ctx);
  registerFolderLabelRoutes(api, ctx);
  registerToolRoutes(api, ctx);
  registerKnowledgeBaseRoutes(api, ctx);
  registerPhoneNumberRoutes(api, ctx);
  registerSipTrunkRoutes(api, ctx);
  registerCampaignRoutes(api, ctx);
  registerWhatsappSenderRoutes(api, ctx);
  registerCallRoutes(api, ctx);
  registerCallLiveRoutes(api, ctx);
  registerOutboundCallRoutes(api, ctx);
  registerConversationRoutes(api, ctx);
  registerGenerateReplyRoutes(api, ctx);
  registerWhatsappRoutes(api, ctx);
  registerInboundWebhookRoutes(api, ctx);
  registerVoicePreviewRoutes(api, ctx);
  registerWebhookSecretRoutes(api, ctx);
}
