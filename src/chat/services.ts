import type { AppContext } from '../context.ts';
import { Agent } from '../agent/run-turn.ts';
import { createLlmRegistry, type LlmRegistry } from '../providers/llm/registry.ts';
import { DeliveryWorker } from '../webhooks/delivery.ts';
import { outboundOf } from '../net/outbound/index.ts';
import { EventPublisher } from '../webhooks/events.ts';
import { agentDeps } from './agent-deps.ts';
import { ConversationService } from './conversation-service.ts';
import { InactivitySweeper } from './inactivity.ts';
import { TwilioClient } from './twilio.ts';
import { WhatsAppService } from './whatsapp-service.ts';

export interface ChatServices {
  llm: LlmRegistry;
  agent: Agent;
  conversations: ConversationService;
  whatsapp: WhatsAppService;
  delivery: DeliveryWorker;
  sweeper: InactivitySweeper;
  /** Starts the background workers (webhook delivery, inactivity sweeps). */
  start(): void;
  /** Stops the workers and waits for in-flight work (AI replies, deliveries). */
  stop(): Promise<void>;
}

const built = new WeakMap<AppContext, ChatServices>();

/**
 * The chat side of one engine, built once per context on first use (routes, main.ts and tests
 * all reach the same instance). Nothing runs in the background until `start()`.
 */
export function chatServices(ctx: AppContext): ChatServices {
  let s = built.get(ctx);
  if (!s) {
    s = buildChatServices(ctx);
    built.set(ctx, s);
  }
  return s;
}

function buildChatServices(ctx: AppContext): ChatServices {
  const llm = createLlmRegistry(ctx.config, ctx.providerMetrics);
  const agent = new Agent(agentDeps(ctx, llm));
  const delivery = new DeliveryWorker({
    outbox: ctx.repos.outbox,
    secretFor: (id) => ctx.repos.accounts.signingSecrets(id),
    clock: ctx.clock,
    logger: ctx.logger,
    fetch: outboundOf(ctx).fetch,
    holder: ctx.config.cluster.nodeId,
    leaseTtlMs: ctx.config.cluster.leaseTtlMs,
  });
  const events = new EventPublisher(ctx.repos.outbox, ctx.clock, () => delivery.kick());
  const conversations = new ConversationService(ctx, agent, events);
  const whatsapp = new WhatsAppService(ctx, conversations, events, new TwilioClient(ctx.config.twilio.baseUrl));
  const sweeper = new InactivitySweeper({
    conversations: ctx.repos.conversations,
    service: conversations,
    assistant: (id) => ctx.repos.assistants.getById(id),
    clock: ctx.clock,
    logger: ctx.logger,
    active: () => ctx.sweepLease?.held ?? true,
    // Nodes sharing a store each sweep it: one of them ends each conversation, once.
    ...(ctx.cluster?.shared ? { claim: (key: string, ttlMs: number) => ctx.cluster!.claim(key, ttlMs) } : {}),
  });
  return {
    llm,
    agent,
    conversations,
    whatsapp,
    delivery,
    sweeper,
    start() {
      delivery.start();
      sweeper.start();
    },
    async stop() {
      await sweeper.stop();
      await whatsapp.idle();
      await delivery.stop();
    },
  };
}
