/* See srtp_transform.h. OpenSSL 3 keeps the SHA1_* calls (deprecated, not removed): they work on a
 * plain struct, which is what lets the HMAC pads be precomputed and copied per packet. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "srtp_transform.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

struct SrtpTransform {
  int kind;
  int rtp_tag, rtcp_tag;
  uint8_t salt[14];
  EVP_CIPHER_CTX *enc; /* CM: AES-128-CTR (both directions); GCM: encrypt */
  EVP_CIPHER_CTX *dec; /* GCM: decrypt */
  SHA_CTX inner, outer; /* CM: SHA-1 after the key XOR ipad / opad block */
};

static void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static void put48(uint8_t *p, uint64_t v) {
  for (int i = 5; i >= 0; i--, v >>= 8) p[i] = (uint8_t)v;
}

SrtpTransform *srtp_transform_new(int kind, const uint8_t *key, size_t key_len, const uint8_t *salt, size_t salt_len,
                                  const uint8_t *auth, size_t auth_len, int rtp_tag, int rtcp_tag) {
  if (salt_len > 14 || (kind == SRTP_KIND_CM_HMAC && (key_len != 16 || auth_len > 64)) ||
      (kind == SRTP_KIND_GCM && key_len != 16 && key_len != 32))
    return NULL;
  SrtpTransform *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->kind = kind;
  t->rtp_tag = rtp_tag;
  t->rtcp_tag = rtcp_tag;
  memcpy(t->salt, salt, salt_len);
  t->enc = EVP_CIPHER_CTX_new();
  if (!t->enc) goto fail;
  if (kind == SRTP_KIND_CM_HMAC) {
    if (EVP_EncryptInit_ex(t->enc, EVP_aes_128_ctr(), NULL, key, NULL) != 1) goto fail;
    uint8_t pad[64];
    memset(pad, 0x36, sizeof pad);
    for (size_t i = 0; i < auth_len; i++) pad[i] ^= auth[i];
    SHA1_Init(&t->inner);
    SHA1_Update(&t->inner, pad, sizeof pad);
    memset(pad, 0x5c, sizeof pad);
    for (size_t i = 0; i < auth_len; i++) pad[i] ^= auth[i];
    SHA1_Init(&t->outer);
    SHA1_Update(&t->outer, pad, sizeof pad);
    OPENSSL_cleanse(pad, sizeof pad);
  } else {
    const EVP_CIPHER *c = key_len == 32 ? EVP_aes_256_gcm() : EVP_aes_128_gcm();
    t->dec = EVP_CIPHER_CTX_new();
    if (!t->dec) goto fail;
    if (EVP_EncryptInit_ex(t->enc, c, NULL, key, NULL) != 1 || EVP_DecryptInit_ex(t->dec, c, NULL, key, NULL) != 1) goto fail;
  }
  return t;
fail:
  srtp_transform_free(t);
  return NULL;
}

void srtp_transform_free(SrtpTransform *t) {
  if (!t) return;
  EVP_CIPHER_CTX_free(t->enc);
  EVP_CIPHER_CTX_free(t->dec);
  OPENSSL_cleanse(t, sizeof *t);
  free(t);
}

/* ---- AES-CM + HMAC-SHA1 ---- */

/* RFC 3711 §4.1.1: IV = salt·2^16 XOR ssrc·2^64 XOR index·2^16; OpenSSL's CTR counts in the low bits. */
static int cm_xor(SrtpTransform *t, uint8_t *p, size_t n, uint32_t ssrc, uint64_t index) {
  if (n == 0) return 1;
  uint8_t iv[16] = {0};
  put32(iv + 4, ssrc);
  put48(iv + 8, index);
  for (int i = 0; i < 14; i++) iv[i] ^= t->salt[i];
  int out = 0;
  return EVP_EncryptInit_ex(t->enc, NULL, NULL, NULL, iv) == 1 && EVP_EncryptUpdate(t->enc, p, &out, p, (int)n) == 1;
}

/* HMAC-SHA1 over a || b (b may be NULL). */
static void hmac(SrtpTransform *t, const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len, uint8_t mac[20]) {
  SHA_CTX c = t->inner;
  SHA1_Update(&c, a, a_len);
  if (b) SHA1_Update(&c, b, b_len);
  SHA1_Final(mac, &c);
  c = t->outer;
  SHA1_Update(&c, mac, 20);
  SHA1_Final(mac, &c);
}

/* ---- AES-GCM ---- */

static int gcm_seal(SrtpTransform *t, const uint8_t iv[12], const uint8_t *aad, size_t aad_len, uint8_t *p, size_t n, uint8_t *tag) {
  int out = 0;
  if (EVP_EncryptInit_ex(t->enc, NULL, NULL, NULL, iv) != 1) return 0;
  if (aad_len && EVP_EncryptUpdate(t->enc, NULL, &out, aad, (int)aad_len) != 1) return 0;
  if (n && EVP_EncryptUpdate(t->enc, p, &out, p, (int)n) != 1) return 0;
  if (EVP_EncryptFinal_ex(t->enc, p + n, &out) != 1) return 0;
  return EVP_CIPHER_CTX_ctrl(t->enc, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
}

/* The AAD comes in up to two parts (SRTCP: header, then E-bit and index). */
static int gcm_open(SrtpTransform *t, const uint8_t iv[12], const uint8_t *aad, size_t aad_len, const uint8_t *aad2, size_t aad2_len,
                    uint8_t *p, size_t n, const uint8_t *tag) {
  int out = 0;
  uint8_t expected[16];
  memcpy(expected, tag, 16);
  if (EVP_DecryptInit_ex(t->dec, NULL, NULL, NULL, iv) != 1) return 0;
  if (aad_len && EVP_DecryptUpdate(t->dec, NULL, &out, aad, (int)aad_len) != 1) return 0;
  if (aad2_len && EVP_DecryptUpdate(t->dec, NULL, &out, aad2, (int)aad2_len) != 1) return 0;
  if (n && EVP_DecryptUpdate(t->dec, p, &out, p, (int)n) != 1) return 0;
  if (EVP_CIPHER_CTX_ctrl(t->dec, EVP_CTRL_GCM_SET_TAG, 16, expected) != 1) return 0;
  return EVP_DecryptFinal_ex(t->dec, p + n, &out) == 1;
}

static void gcm_iv(SrtpTransform *t, uint8_t iv[12], uint32_t ssrc, uint64_t index48) {
  iv[0] = iv[1] = 0;
  put32(iv + 2, ssrc);
  put48(iv + 6, index48);
  for (int i = 0; i < 12; i++) iv[i] ^= t->salt[i];
}

/* ---- SRTP ---- */

long srtp_protect_rtp(SrtpTransform *t, uint8_t *buf, size_t cap, size_t len, size_t header_len, uint32_t ssrc, uint64_t index) {
  if (header_len > len || len + (size_t)t->rtp_tag > cap) return -1;
  if (t->kind == SRTP_KIND_GCM) {
    uint8_t iv[12];
    gcm_iv(t, iv, ssrc, index);
    return gcm_seal(t, iv, buf, header_len, buf + header_len, len - header_len, buf + len) ? (long)(len + 16) : -1;
  }
  if (!cm_xor(t, buf + header_len, len - header_len, ssrc, index)) return -1;
  uint8_t roc[4], mac[20];
  put32(roc, (uint32_t)(index >> 16));
  hmac(t, buf, len, roc, 4, mac);
  memcpy(buf + len, mac, (size_t)t->rtp_tag);
  return (long)(len + (size_t)t->rtp_tag);
}

long srtp_unprotect_rtp(SrtpTransform *t, uint8_t *buf, size_t len, size_t header_len, uint32_t ssrc, uint64_t index) {
  if (len < header_len + (size_t)t->rtp_tag) return -1;
  size_t end = len - (size_t)t->rtp_tag;
  if (t->kind == SRTP_KIND_GCM) {
    uint8_t iv[12];
    gcm_iv(t, iv, ssrc, index);
    return gcm_open(t, iv, buf, header_len, NULL, 0, buf + header_len, end - header_len, buf + end) ? (long)end : -1;
  }
  uint8_t roc[4], mac[20];
  put32(roc, (uint32_t)(index >> 16));
  hmac(t, buf, end, roc, 4, mac);
  if (CRYPTO_memcmp(mac, buf + end, (size_t)t->rtp_tag) != 0) return -1;
  return cm_xor(t, buf + header_len, end - header_len, ssrc, index) ? (long)end : -1;
}

/* ---- SRTCP ---- */

long srtp_protect_rtcp(SrtpTransform *t, uint8_t *buf, size_t cap, size_t len, uint32_t ssrc, uint32_t srtcp_index) {
  if (len < 8 || len + 4 + (size_t)t->rtcp_tag > cap) return -1;
  uint8_t word[4];
  put32(word, 0x80000000u | (srtcp_index & 0x7fffffffu));
  if (t->kind == SRTP_KIND_GCM) {
    uint8_t iv[12], aad[12];
    gcm_iv(t, iv, ssrc, srtcp_index & 0x7fffffffu);
    memcpy(aad, buf, 8);
    memcpy(aad + 8, word, 4);
    if (!gcm_seal(t, iv, aad, 12, buf + 8, len - 8, buf + len)) return -1;
    memcpy(buf + len + 16, word, 4);
    return (long)(len + 20);
  }
  if (!cm_xor(t, buf + 8, len - 8, ssrc, srtcp_index & 0x7fffffffu)) return -1;
  memcpy(buf + len, word, 4);
  uint8_t mac[20];
  hmac(t, buf, len + 4, NULL, 0, mac);
  memcpy(buf + len + 4, mac, (size_t)t->rtcp_tag);
  return (long)(len + 4 + (size_t)t->rtcp_tag);
}

long srtp_unprotect_rtcp(SrtpTransform *t, uint8_t *buf, size_t len, uint32_t ssrc, uint32_t srtcp_index, int encrypted) {
  if (len < 8 + 4 + (size_t)t->rtcp_tag) return -1;
  if (t->kind == SRTP_KIND_GCM) {
    size_t end = len - 20;
    uint8_t iv[12];
    gcm_iv(t, iv, ssrc, srtcp_index & 0x7fffffffu);
    /* RFC 7714 §9.2: unencrypted, the whole packet is AAD (then the index word) and nothing is decrypted. */
    if (!encrypted) return gcm_open(t, iv, buf, end, buf + end + 16, 4, buf + end, 0, buf + end) ? (long)end : -1;
    return gcm_open(t, iv, buf, 8, buf + end + 16, 4, buf + 8, end - 8, buf + end) ? (long)end : -1;
  }
  size_t end = len - (size_t)t->rtcp_tag;
  uint8_t mac[20];
  hmac(t, buf, end, NULL, 0, mac);
  if (CRYPTO_memcmp(mac, buf + end, (size_t)t->rtcp_tag) != 0) return -1;
  if (encrypted && !cm_xor(t, buf + 8, end - 4 - 8, ssrc, srtcp_index & 0x7fffffffu)) return -1;
  return (long)(end - 4);
}
