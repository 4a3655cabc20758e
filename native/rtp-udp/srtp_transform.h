/*
 * The SRTP suites' per-packet transforms (RFC 3711 AES-CM + HMAC-SHA1, RFC 7714 AES-GCM) on
 * OpenSSL's libcrypto as Node itself links it: key schedules and HMAC pads are set up once per
 * context, and a packet costs no allocation. In place in the caller's buffer, which has room for
 * the trailer. The index bookkeeping (rollover counter, replay window) stays in TypeScript
 * (src/media/srtp/srtp-session.ts); this file only does what that code passes it, the same
 * interface as src/media/srtp/cipher-node.ts. Returns are lengths, or -1 (authentication failed,
 * or a length that does not fit).
 */
#ifndef SRTP_TRANSFORM_H
#define SRTP_TRANSFORM_H

#include <stddef.h>
#include <stdint.h>

typedef struct SrtpTransform SrtpTransform;

enum { SRTP_KIND_CM_HMAC = 0, SRTP_KIND_GCM = 1 };

/* key 16 (CM, GCM-128) or 32 (GCM-256) bytes; salt 14 (CM) or 12 (GCM); auth 20 (CM) or none. */
SrtpTransform *srtp_transform_new(int kind, const uint8_t *key, size_t key_len, const uint8_t *salt, size_t salt_len,
                                  const uint8_t *auth, size_t auth_len, int rtp_tag, int rtcp_tag);
void srtp_transform_free(SrtpTransform *t);

/* `cap`: the buffer's size, so that the tag (and SRTCP word) must fit. `index`: 48-bit packet index. */
long srtp_protect_rtp(SrtpTransform *t, uint8_t *buf, size_t cap, size_t len, size_t header_len, uint32_t ssrc, uint64_t index);
long srtp_unprotect_rtp(SrtpTransform *t, uint8_t *buf, size_t len, size_t header_len, uint32_t ssrc, uint64_t index);
long srtp_protect_rtcp(SrtpTransform *t, uint8_t *buf, size_t cap, size_t len, uint32_t ssrc, uint32_t srtcp_index);
long srtp_unprotect_rtcp(SrtpTransform *t, uint8_t *buf, size_t len, uint32_t ssrc, uint32_t srtcp_index, int encrypted);

#endif
