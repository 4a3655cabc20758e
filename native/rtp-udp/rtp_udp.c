/*
 * RTP sockets for Switchboard's RTP I/O thread (src/media/rtp-io/worker.ts), Linux only.
 *
 * What Node's dgram does per datagram, done in C: a receive is recvmmsg() straight from the
 * socket into the inbound ring (the SharedArrayBuffer ring of src/media/rtp-io/ring.ts, in the
 * record layout of records.ts), with no ArrayBuffer, no address object and no JavaScript call
 * per datagram; a send is one sendto() behind one N-API call. The worker's JavaScript keeps
 * everything else (the due queue, the wake-up logic, socket set-up), and uses dgram instead
 * whenever this module is missing (it is an optional dependency) or refuses a socket.
 *
 * Reading: each socket is watched two ways. Its libuv poll reads it as soon as a datagram comes
 * (immediate, the default); and the thread's own epoll set, which libuv does not watch, lets
 * sweep() read every socket with datagrams waiting in one call. setPaced(true) stops the polls:
 * the worker then sweeps on its own timer, just before the event-loop thread's media passes
 * take the ring, so datagrams cost no wake-up of their own however they are spread in time.
 * Arrival times are the kernel's (SO_TIMESTAMPNS), so a datagram read late is still stamped
 * with when it came.
 *
 * Threading: every function of this file runs on the worker's thread (its own libuv loop and
 * N-API env), and so does every poll callback: the ring's producer is that one thread,
 * JavaScript or C. The same module, loaded on the event-loop thread, is the ring's consumer there
 * (fast_drain.c, with the receive path's cores of rtp_inbound.c); those functions keep no state
 * shared with this file's.
 *
 * Lifetime: a thread that ends (terminated, or crashed) may leave sockets open; an async cleanup
 * hook closes their poll handles and descriptors before Node closes the thread's loop, and the
 * thread's state (its epoll set) is freed with its environment.
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "fast_drain.h"
#include "inbound_napi.h"
#include "napi_util.h"
#include "srtp_napi.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the ring's records are little-endian: this build assumes a little-endian host"
#endif

#define RING_HEADER_BYTES 16
#define RING_WRAP (-1)
#define RECORD_HEADER 16
#define KIND_PACKET 1
#define BATCH 16
/* Bigger than any RTP packet a call carries; a longer datagram is cut (and counted dropped). */
#define MAX_DATAGRAM 2048
/* Datagrams taken from one socket per readiness before the loop serves the others. */
#define MAX_PER_EVENT 64
/* Ready sockets one epoll_wait of a sweep reports (a sweep repeats while it is filled). */
#define SWEEP_EVENTS 64
/* Room for one SCM_TIMESTAMPNS control message. */
#define CONTROL_BYTES 64

typedef struct Sock Sock;

typedef struct {
  napi_env env;
  Sock *open_socks;   /* every socket not yet closed (a list through Sock.next/prev) */
  int closing_count;  /* poll handles whose close callback has not run yet */
  napi_async_cleanup_hook_handle cleanup; /* set while the thread ends and sockets remain */
  uint8_t *ring;      /* the inbound SharedArrayBuffer: header words, then `capacity` bytes */
  uint32_t capacity;  /* a power of two */
  double origin_ms;   /* the event-loop thread's hr origin (protocol.ts hrOriginMs) */
  napi_ref on_inbound;
  napi_async_context async; /* what onInbound runs in (see notify); NULL once the thread ends */
  int need_notify;    /* the JavaScript side is told of the next write (armNotify sets it) */
  int epfd;           /* every open socket, for sweep() (not watched by libuv) */
  int paced;          /* the polls are stopped: sweep() reads (setPaced) */
  double polled_reads; /* sockets read because their poll woke the thread (readCounts) */
  double swept_reads;  /* sockets read by a sweep */
  uint8_t scratch[BATCH][MAX_DATAGRAM];
  uint8_t control[BATCH][CONTROL_BYTES];
} State;

struct Sock {
  uv_poll_t poll;
  int fd;
  uint32_t id;
  State *st;
  Sock *next, *prev;
};

static void on_env_cleanup(napi_async_cleanup_hook_handle handle, void *arg);
static void close_sock(Sock *k);

static State *state_of(napi_env env) {
  void *data = NULL;
  napi_get_instance_data(env, &data);
  return (State *)data;
}


/* ---- the ring's producer side (ring.ts reserve + commit, records.ts writeRecord) ---- */

static void put_i32(uint8_t *at, int32_t v) { memcpy(at, &v, 4); }

static int ring_write(State *s, uint32_t id, double time, uint16_t port, const char *addr, uint8_t addr_len, const uint8_t *payload, uint32_t len) {
  int32_t *header = (int32_t *)s->ring;
  uint8_t *data = s->ring + RING_HEADER_BYTES;
  uint32_t length = RECORD_HEADER + addr_len + len;
  if (length > s->capacity / 2 - 4) return 0;
  uint32_t write = (uint32_t)__atomic_load_n(&header[0], __ATOMIC_SEQ_CST);
  uint32_t read = (uint32_t)__atomic_load_n(&header[1], __ATOMIC_SEQ_CST);
  uint32_t free_bytes = s->capacity - (write - read);
  uint32_t offset = write & (s->capacity - 1);
  uint32_t size = 4 + ((length + 3) & ~3u);
  uint32_t tail = s->capacity - offset;
  uint32_t body, advance;
  if (size <= tail) {
    if (size > free_bytes) return 0;
    put_i32(data + offset, (int32_t)length);
    body = offset + 4;
    advance = size;
  } else {
    if (tail + size > free_bytes) return 0;
    put_i32(data + offset, RING_WRAP);
    put_i32(data, (int32_t)length);
    body = 4;
    advance = tail + size;
  }
  uint8_t *b = data + body;
  b[0] = KIND_PACKET;
  b[1] = addr_len;
  memcpy(b + 2, &port, 2);
  memcpy(b + 4, &id, 4);
  memcpy(b + 8, &time, 8);
  memcpy(b + RECORD_HEADER, addr, addr_len);
  memcpy(b + RECORD_HEADER + addr_len, payload, len);
  __atomic_store_n(&header[0], (int32_t)(write + advance), __ATOMIC_SEQ_CST);
  return 1;
}

/* ---- addresses ---- */

static int to_sockaddr(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len) {
  memset(ss, 0, sizeof *ss);
  struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
  if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    *len = sizeof *a4;
    return 0;
  }
  if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    *len = sizeof *a6;
    return 0;
  }
  return -EINVAL;
}

static int get_string(napi_env env, napi_value v, char *buf, size_t size) {
  size_t n = 0;
  if (napi_get_value_string_utf8(env, v, buf, size, &n) != napi_ok || n + 1 >= size) return -1;
  return 0;
}

static int get_int(napi_env env, napi_value v, int32_t *out) {
  return napi_get_value_int32(env, v, out) == napi_ok ? 0 : -1;
}

/* ---- receiving ---- */

/*
 * Calls onInbound(id, dropped, -errno). From a poll's wake-up no JavaScript is on the stack, so
 * the call goes through napi_make_callback, as Node's own handles call into JavaScript: in an
 * async context of its own, created by init() (async_hooks and AsyncLocalStorage see it as a
 * resource of whoever set the module up; a plain napi_call_function ran in none, async id 0).
 * From sweep() (called by JavaScript) the same call is simply nested.
 */
static void notify(State *s, uint32_t id, uint32_t dropped, int error) {
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value cb, recv, args[3];
  napi_get_reference_value(env, s->on_inbound, &cb);
  /* (napi_make_callback needs an object as `this`: the global, as for a plain call.) */
  napi_get_global(env, &recv);
  napi_create_uint32(env, id, &args[0]);
  napi_create_uint32(env, dropped, &args[1]);
  napi_create_int32(env, -error, &args[2]);
  napi_status status = s->async ? napi_make_callback(env, s->async, recv, cb, 3, args, NULL) : napi_call_function(env, recv, cb, 3, args, NULL);
  bool pending = false;
  if (status != napi_ok && napi_is_exception_pending(env, &pending) == napi_ok && pending) {
    napi_value error;
    napi_get_and_clear_last_exception(env, &error);
    napi_fatal_exception(env, error);
  }
  napi_close_handle_scope(env, scope);
}

/* Milliseconds in the event-loop thread's time base (protocol.ts hrOriginMs) of a CLOCK_REALTIME
 * kernel stamp, given the two clocks' offset now. */
static double stamp_ms(const struct msghdr *h, double real_minus_mono_ms, double fallback) {
  for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR((struct msghdr *)h, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      struct timespec ts;
      memcpy(&ts, CMSG_DATA(c), sizeof ts);
      double t = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 - real_minus_mono_ms;
      /* A stamp from the future (clock stepped meanwhile) is no stamp. */
      return t <= fallback ? t : fallback;
    }
  }
  return fallback;
}

/*
 * CLOCK_REALTIME minus uv_hrtime(), in ms: what turns a kernel arrival stamp into the event-loop
 * thread's time base. The realtime read sits between two monotonic ones, and the pair that is
 * closest together counts (a few tries): a thread descheduled between two plain reads would skew
 * every stamp of the batch late by as long as it waited.
 */
static double realtime_minus_hr_ms(void) {
  double best = 0, closest = INFINITY;
  for (int i = 0; i < 3 && closest > 0.05; i++) {
    double before = (double)uv_hrtime() / 1e6;
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    double after = (double)uv_hrtime() / 1e6;
    if (after - before < closest) {
      closest = after - before;
      best = (double)real.tv_sec * 1e3 + (double)real.tv_nsec / 1e6 - (before + after) / 2;
    }
  }
  return best;
}

/*
 * An IPv4 address as dotted decimal into `out` (at least 16 bytes), NUL-terminated: what
 * inet_ntop() writes, without the sprintf() behind it (glibc's), once per datagram.
 */
static void format_ipv4(const uint8_t b[4], char *out) {
  for (int i = 0; i < 4; i++) {
    unsigned v = b[i];
    if (v >= 100) *out++ = (char)('0' + v / 100);
    if (v >= 10) *out++ = (char)('0' + v / 10 % 10);
    *out++ = (char)('0' + v % 10);
    *out++ = i < 3 ? '.' : '\0';
  }
}

/* Everything the socket holds, into the ring (at most MAX_PER_EVENT datagrams). */
static void read_socket(Sock *k) {
  State *s = k->st;
  struct mmsghdr msgs[BATCH];
  struct iovec iov[BATCH];
  struct sockaddr_storage from[BATCH];
  uint32_t written = 0, dropped = 0;
  int taken = 0, error = 0;
  while (taken < MAX_PER_EVENT) {
    for (int i = 0; i < BATCH; i++) {
      iov[i].iov_base = s->scratch[i];
      iov[i].iov_len = MAX_DATAGRAM;
      memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof from[i];
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_control = s->control[i];
      msgs[i].msg_hdr.msg_controllen = CONTROL_BYTES;
    }
    int n = recvmmsg(k->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
    if (n < 0) {
      if (errno == EINTR) continue;
      /* A connected socket reports an ICMP error once (ECONNREFUSED...): passed on, as dgram's
       * 'error' event; then read on. */
      if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH) {
        error = errno;
        continue;
      }
      break;
    }
    if (n == 0) break;
    double offset = realtime_minus_hr_ms();
    double now = (double)uv_hrtime() / 1e6 - s->origin_ms;
    for (int j = 0; j < n; j++) {
      char addr[INET6_ADDRSTRLEN];
      uint16_t port = 0;
      if (from[j].ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&from[j];
        format_ipv4((const uint8_t *)&a->sin_addr, addr);
        port = ntohs(a->sin_port);
      } else if (from[j].ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&from[j];
        if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
          memcpy(addr, "::ffff:", 7);
          format_ipv4(a->sin6_addr.s6_addr + 12, addr + 7);
        } else {
          inet_ntop(AF_INET6, &a->sin6_addr, addr, sizeof addr);
        }
        port = ntohs(a->sin6_port);
      } else {
        continue;
      }
      if (msgs[j].msg_hdr.msg_flags & MSG_TRUNC) {
        dropped++;
        continue;
      }
      double at = stamp_ms(&msgs[j].msg_hdr, offset + s->origin_ms, now);
      if (ring_write(s, k->id, at, port, addr, (uint8_t)strlen(addr), s->scratch[j], msgs[j].msg_len)) written++;
      else dropped++;
    }
    taken += n;
    if (n < BATCH) break;
  }
  if ((written > 0 && s->need_notify) || dropped > 0 || error != 0) {
    if (written > 0) s->need_notify = 0;
    notify(s, k->id, dropped, error);
  }
}

static void on_readable(uv_poll_t *handle, int status, int events) {
  (void)status;
  (void)events;
  Sock *k = (Sock *)handle->data;
  k->st->polled_reads++;
  read_socket(k);
}

/* The thread's environment is torn down (after on_env_cleanup has closed every socket). */
static void free_state(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  State *s = (State *)data;
  close(s->epfd);
  free(s);
}

/* ---- the API ---- */

/** init(inboundRing: Uint8Array over the whole SharedArrayBuffer, originMs, onInbound(id, dropped, errno)) */
static napi_value Init(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 3) return throw_msg(env, "init(ring, originMs, onInbound)");
  State *s = state_of(env);
  if (s) return throw_msg(env, "already initialised in this thread");
  napi_typedarray_type type;
  size_t length, offset;
  void *data;
  napi_value buffer;
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &data, &buffer, &offset) != napi_ok || type != napi_uint8_array) return throw_msg(env, "ring: a Uint8Array");
  if (length <= RING_HEADER_BYTES || ((length - RING_HEADER_BYTES) & (length - RING_HEADER_BYTES - 1)) != 0) return throw_msg(env, "ring: header plus a power of two");
  s = calloc(1, sizeof *s);
  if (!s) return throw_msg(env, "out of memory");
  s->env = env;
  s->ring = data;
  s->capacity = (uint32_t)(length - RING_HEADER_BYTES);
  napi_get_value_double(env, argv[1], &s->origin_ms);
  napi_create_reference(env, argv[2], 1, &s->on_inbound);
  s->need_notify = 1;
  s->epfd = epoll_create1(EPOLL_CLOEXEC);
  if (s->epfd < 0) {
    napi_delete_reference(env, s->on_inbound);
    free(s);
    return throw_msg(env, "epoll_create1 failed");
  }
  napi_value resource_name;
  if (napi_create_string_utf8(env, "switchboard-rtp-udp inbound", NAPI_AUTO_LENGTH, &resource_name) != napi_ok ||
      napi_async_init(env, NULL, resource_name, &s->async) != napi_ok)
    s->async = NULL;
  napi_set_instance_data(env, s, free_state, NULL);
  napi_add_async_cleanup_hook(env, on_env_cleanup, s, NULL);
  return NULL;
}

/** open(host, port): [fd, boundPort], or a negative errno. */
static napi_value Open(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char host[128];
  int32_t port;
  if (argc < 2 || get_string(env, argv[0], host, sizeof host) || get_int(env, argv[1], &port)) return throw_msg(env, "open(host, port)");
  struct sockaddr_storage ss;
  socklen_t len;
  if (to_sockaddr(host, port, &ss, &len)) return int_value(env, -EINVAL);
  int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return int_value(env, -errno);
  if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
    int e = errno;
    close(fd);
    return int_value(env, -e);
  }
  struct sockaddr_storage bound;
  socklen_t blen = sizeof bound;
  getsockname(fd, (struct sockaddr *)&bound, &blen);
  int bport = bound.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&bound)->sin_port) : ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
  napi_value out;
  napi_create_array_with_length(env, 2, &out);
  napi_set_element(env, out, 0, int_value(env, fd));
  napi_set_element(env, out, 1, int_value(env, bport));
  return out;
}

/** startReceiving(fd, socketId): a handle for close(), or a libuv error (the socket is then closed). */
static napi_value StartReceiving(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int32_t fd, id;
  State *s = state_of(env);
  if (!s) return throw_msg(env, "init() first");
  if (argc < 2 || get_int(env, argv[0], &fd) || get_int(env, argv[1], &id)) return throw_msg(env, "startReceiving(fd, id)");
  Sock *k = calloc(1, sizeof *k);
  if (!k) return throw_msg(env, "out of memory");
  k->fd = fd;
  k->id = (uint32_t)id;
  k->st = s;
  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  int r = uv_poll_init(loop, &k->poll, fd);
  if (r != 0) {
    /* Never polled, so never to be closed through a handle: closed here. */
    close(fd);
    free(k);
    return int_value(env, r);
  }
  k->poll.data = k;
  k->next = s->open_socks;
  if (k->next) k->next->prev = k;
  s->open_socks = k;
  int on = 1;
  struct epoll_event ev = {.events = EPOLLIN, .data = {.ptr = k}};
  if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) r = -errno;
  else r = s->paced ? 0 : uv_poll_start(&k->poll, UV_READABLE, on_readable);
  if (r != 0) {
    close_sock(k);
    return int_value(env, r);
  }
  napi_value out;
  napi_create_external(env, k, NULL, NULL, &out);
  return out;
}

static void on_closed(uv_handle_t *handle) {
  Sock *k = (Sock *)handle->data;
  State *s = k->st;
  close(k->fd);
  free(k);
  s->closing_count--;
  if (s->closing_count == 0 && s->cleanup) {
    napi_async_cleanup_hook_handle h = s->cleanup;
    s->cleanup = NULL;
    napi_remove_async_cleanup_hook(h);
  }
}

static void close_sock(Sock *k) {
  State *s = k->st;
  if (uv_is_closing((uv_handle_t *)&k->poll)) return;
  if (k->prev) k->prev->next = k->next;
  else s->open_socks = k->next;
  if (k->next) k->next->prev = k->prev;
  k->next = k->prev = NULL;
  s->closing_count++;
  epoll_ctl(s->epfd, EPOLL_CTL_DEL, k->fd, NULL);
  uv_poll_stop(&k->poll);
  uv_close((uv_handle_t *)&k->poll, on_closed);
}

/* The thread is ending: close what is still open, and let Node close the loop once that is done. */
static void on_env_cleanup(napi_async_cleanup_hook_handle handle, void *arg) {
  State *s = (State *)arg;
  s->cleanup = handle;
  if (s->async) {
    napi_async_destroy(s->env, s->async);
    s->async = NULL;
  }
  while (s->open_socks) close_sock(s->open_socks);
  if (s->closing_count == 0) {
    s->cleanup = NULL;
    napi_remove_async_cleanup_hook(handle);
  }
}

/** close(handle): stops receiving and closes the socket (once the loop lets go of it). */
static napi_value Close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  Sock *k = NULL;
  if (argc < 1 || napi_get_value_external(env, argv[0], (void **)&k) != napi_ok || !k) return throw_msg(env, "close(handle)");
  close_sock(k);
  return NULL;
}

/** connect(fd, host, port) / connect(fd): 0 or a negative errno; without a host, disconnects. */
static napi_value Connect(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int32_t fd, port = 0;
  if (argc < 1 || get_int(env, argv[0], &fd)) return throw_msg(env, "connect(fd, host?, port?)");
  struct sockaddr_storage ss;
  socklen_t len;
  if (argc >= 3) {
    char host[128];
    if (get_string(env, argv[1], host, sizeof host) || get_int(env, argv[2], &port)) return throw_msg(env, "connect(fd, host, port)");
    if (to_sockaddr(host, port, &ss, &len)) return int_value(env, -EINVAL);
  } else {
    memset(&ss, 0, sizeof ss);
    ss.ss_family = AF_UNSPEC;
    len = sizeof(struct sockaddr);
  }
  if (connect(fd, (struct sockaddr *)&ss, len) < 0 && !(argc < 3 && errno == EAFNOSUPPORT)) return int_value(env, -errno);
  return int_value(env, 0);
}

/** send(fd, bytes): over the connection; sendTo(fd, bytes, port, host). 0 or a negative errno. */
static napi_value Send(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int32_t fd;
  napi_typedarray_type type;
  size_t length, offset;
  void *data;
  napi_value buffer;
  if (argc < 2 || get_int(env, argv[0], &fd) || napi_get_typedarray_info(env, argv[1], &type, &length, &data, &buffer, &offset) != napi_ok) return throw_msg(env, "send(fd, bytes[, port, host])");
  ssize_t r;
  if (argc >= 4) {
    int32_t port;
    char host[128];
    struct sockaddr_storage ss;
    socklen_t len;
    if (get_int(env, argv[2], &port) || get_string(env, argv[3], host, sizeof host)) return throw_msg(env, "sendTo(fd, bytes, port, host)");
    if (to_sockaddr(host, port, &ss, &len)) return int_value(env, -EINVAL);
    r = sendto(fd, data, length, MSG_DONTWAIT, (struct sockaddr *)&ss, len);
  } else {
    r = send(fd, data, length, MSG_DONTWAIT);
  }
  return int_value(env, r < 0 ? -errno : 0);
}

/** armNotify(): the next datagram written to the ring calls onInbound again. */
static napi_value ArmNotify(napi_env env, napi_callback_info info) {
  State *s = state_of(env);
  if (s) s->need_notify = 1;
  return NULL;
}

/** setPaced(on): stop (true) or restart (false) the sockets' polls; sweep() reads while stopped. 0 or a libuv error. */
static napi_value SetPaced(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  State *s = state_of(env);
  bool on;
  if (!s || argc < 1 || napi_get_value_bool(env, argv[0], &on) != napi_ok) return throw_msg(env, "setPaced(on) after init()");
  int r = 0;
  if (s->paced != (int)on) {
    s->paced = on;
    for (Sock *k = s->open_socks; k; k = k->next) {
      int e = on ? uv_poll_stop(&k->poll) : uv_poll_start(&k->poll, UV_READABLE, on_readable);
      if (e != 0 && r == 0) r = e;
    }
  }
  return int_value(env, r);
}

/** sweep(): reads every socket with datagrams waiting into the ring; how many sockets had some. */
static napi_value Sweep(napi_env env, napi_callback_info info) {
  (void)info;
  State *s = state_of(env);
  if (!s) return throw_msg(env, "init() first");
  struct epoll_event evs[SWEEP_EVENTS];
  int total = 0;
  for (;;) {
    int n = epoll_wait(s->epfd, evs, SWEEP_EVENTS, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (int i = 0; i < n; i++) read_socket((Sock *)evs[i].data.ptr);
    total += n;
    s->swept_reads += n;
    if (n < SWEEP_EVENTS) break;
  }
  return int_value(env, total);
}

/** readCounts(): [sockets read on their poll's wake-up, sockets read by sweeps], so far. */
static napi_value ReadCounts(napi_env env, napi_callback_info info) {
  (void)info;
  State *s = state_of(env);
  if (!s) return throw_msg(env, "init() first");
  napi_value out, v;
  napi_create_array_with_length(env, 2, &out);
  napi_create_double(env, s->polled_reads, &v);
  napi_set_element(env, out, 0, v);
  napi_create_double(env, s->swept_reads, &v);
  napi_set_element(env, out, 1, v);
  return out;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
    {"init", NULL, Init, NULL, NULL, NULL, napi_default, NULL},
    {"open", NULL, Open, NULL, NULL, NULL, napi_default, NULL},
    {"startReceiving", NULL, StartReceiving, NULL, NULL, NULL, napi_default, NULL},
    {"close", NULL, Close, NULL, NULL, NULL, napi_default, NULL},
    {"connect", NULL, Connect, NULL, NULL, NULL, napi_default, NULL},
    {"send", NULL, Send, NULL, NULL, NULL, napi_default, NULL},
    {"armNotify", NULL, ArmNotify, NULL, NULL, NULL, napi_default, NULL},
    {"setPaced", NULL, SetPaced, NULL, NULL, NULL, napi_default, NULL},
    {"sweep", NULL, Sweep, NULL, NULL, NULL, napi_default, NULL},
    {"readCounts", NULL, ReadCounts, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  inbound_define(env, exports);
  fast_drain_define(env, exports);
  srtp_define(env, exports);
  return exports;
}
