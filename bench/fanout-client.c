/*
 * A native load generator for the 10,000-subscriber fan-out scenario
 * (scenarios/stream-fanout-ws.ts): the same bare RFC 6455 client as fanout-client.ts, in C
 * on one epoll loop, so the clients sharing the machine's cores with the service cost a
 * fraction of what a Node process costs per frame (a Node read is a libuv callback into
 * JavaScript per socket). What it does per frame is what the Node client does: every frame is
 * read and parsed, pings are answered, and an `item.delta` frame's time marks `~t=<epoch ms>~`
 * (ASCII in JSON and MessagePack frames alike) are stamped against the realtime clock at the
 * read that completed the frame.
 *
 * Usage: fanout-client <host> <port> <path> <api key> <count> <first index> <report prefix>
 * Protocol with the parent, in lines: on stdout `live <n>` once every socket has its
 * `stream.live` (or `error <text>`); on stdin `count` is answered `received <n>` (deltas
 * received so far), `report` writes <prefix>.samples and <prefix>.xadd (float64, little
 * endian: receipt − mark; receipt − the XADD time in the record's stream id) and
 * <prefix>.deltas (int32 per socket), answers `reported`, and exits.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define OPEN_CONCURRENCY 10
#define UPGRADE_RETRIES 50
#define RETRY_DELAY_MS 200.0
#define READ_SIZE (256 * 1024)
/*
 * After a wake-up that read anything (streaming phase only), the loop sleeps this long outside
 * epoll before waiting again. On loopback the SENDER's send() runs the receiver's TCP input and
 * wakes a receiver asleep in epoll_wait (sock_def_readable: 18 % of the service's main thread in
 * `perf record` with a client that went back to sleep after every socket, 7 % with this pause); a client that reads
 * every millisecond is woken about once per millisecond instead of once per socket, as a NIC's
 * interrupt coalescing does for a client across a network. Receipt is still stamped at the read,
 * so the pause counts in the latency. FANOUT_CLIENT_PAUSE_US overrides it (0: none).
 */
#define DEFAULT_PAUSE_US 1000

struct conn {
  int fd;
  int index;
  int upgraded;
  int live;
  int attempts;
  int deltas;
  double retry_at; /* > 0: closed after a refusal, reopen at this time */
  char *pending;
  size_t plen, pcap;
};

struct doubles {
  double *v;
  size_t n, cap;
};

static struct conn *conns;
static int count, first, live_count, opening, next_to_open;
static int epfd;
static struct sockaddr_in addr;
static char request_head[4096];
static const char *path_arg, *host_arg, *key_arg;
static struct doubles samples, from_xadd;
static long received_total;
static long pause_ns;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what) {
  printf("error %s: %s\n", what, strerror(errno));
  fflush(stdout);
  exit(1);
}

static void push(struct doubles *d, double x) {
  if (d->n == d->cap) {
    d->cap = d->cap ? d->cap * 2 : 65536;
    d->v = realloc(d->v, d->cap * sizeof(double));
    if (!d->v) die("realloc");
  }
  d->v[d->n++] = x;
}

static void write_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) { /* a full send buffer on a pong: wait briefly */
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
        continue;
      }
      return; /* the socket is gone: its frames stop, and the parent sees it short */
    }
    p += w;
    len -= (size_t)w;
  }
}

static void start(struct conn *c) {
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) die("socket");
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(c->fd, (struct sockaddr *)&addr, sizeof addr) < 0 && errno != EINPROGRESS) die("connect");
  c->upgraded = 0;
  c->plen = 0;
  c->retry_at = 0;
  struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl");
  opening++;
}

/* The connection is up: send the upgrade request, then wait for its answer. */
static void send_upgrade(struct conn *c) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char key[25];
  for (int i = 0; i < 22; i++) key[i] = alphabet[rand() % 64];
  key[22] = '=';
  key[23] = '=';
  key[24] = 0;
  char req[4608];
  int n = snprintf(req, sizeof req, request_head, key, (first + c->index) % 2 == 0 ? "svc.json.v1" : "svc.msgpack.v1");
  write_all(c->fd, req, (size_t)n);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
  if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) die("epoll_ctl");
}

static void pong(struct conn *c, const unsigned char *payload, size_t len) {
  unsigned char out[6 + 125];
  if (len > 125) len = 125;
  out[0] = 0x80 | 0xa;
  out[1] = 0x80 | (unsigned char)len;
  for (int i = 0; i < 4; i++) out[2 + i] = (unsigned char)rand();
  for (size_t i = 0; i < len; i++) out[6 + i] = payload[i] ^ out[2 + (i % 4)];
  write_all(c->fd, out, 6 + len);
}

static void became_live(struct conn *c) {
  c->live = 1;
  live_count++;
  if (live_count == count) {
    printf("live %d\n", live_count);
    fflush(stdout);
  }
}

/* One data frame's payload: the live announcement, or a delta's marks. */
static void frame(struct conn *c, const unsigned char *p, size_t len, double received) {
  if (!c->live && memmem(p, len, "stream.live", 11)) became_live(c);
  if (!memmem(p, len, "item.delta", 10)) return;
  /* The stream id `<13-digit ms>-<seq>` leads the record (JSON's "id", MessagePack's first value). */
  size_t head = len < 48 ? len : 48;
  for (size_t i = 0; i + 14 <= head; i++) {
    size_t j = i;
    while (j < head && p[j] >= '0' && p[j] <= '9') j++;
    if (j - i == 13 && j < head && p[j] == '-') {
      double ms = 0;
      for (size_t k = i; k < j; k++) ms = ms * 10 + (p[k] - '0');
      push(&from_xadd, received - ms);
      break;
    }
    if (j > i) i = j;
  }
  const unsigned char *at = p, *end = p + len;
  while ((at = memmem(at, (size_t)(end - at), "~t=", 3)) != NULL) {
    at += 3;
    const unsigned char *close = memchr(at, '~', (size_t)(end - at));
    if (!close) break;
    char number[32];
    size_t n = (size_t)(close - at) < sizeof number - 1 ? (size_t)(close - at) : sizeof number - 1;
    memcpy(number, at, n);
    number[n] = 0;
    push(&samples, received - strtod(number, NULL));
    c->deltas++;
    received_total++;
    at = close;
  }
}

static void closed(struct conn *c, const char *status) {
  epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  c->fd = -1;
  if (!c->upgraded) {
    opening--;
    if (++c->attempts > UPGRADE_RETRIES) {
      printf("error upgrade refused: %s\n", status);
      fflush(stdout);
      exit(1);
    }
    c->retry_at = now_ms() + RETRY_DELAY_MS;
    return;
  }
  if (live_count < count) {
    printf("error socket %d closed before every subscriber was live\n", c->index);
    fflush(stdout);
    exit(1);
  }
}

/* Parses what is buffered for the connection; returns the bytes consumed. */
static size_t parse(struct conn *c, const unsigned char *buf, size_t len, double received) {
  size_t at = 0;
  if (!c->upgraded) {
    const unsigned char *end = memmem(buf, len, "\r\n\r\n", 4);
    if (!end) return 0;
    if (len < 12 || memcmp(buf, "HTTP/1.1 101", 12) != 0) {
      char status[64];
      const unsigned char *eol = memmem(buf, len, "\r\n", 2);
      size_t n = (size_t)(eol - buf) < sizeof status - 1 ? (size_t)(eol - buf) : sizeof status - 1;
      memcpy(status, buf, n);
      status[n] = 0;
      closed(c, status);
      return (size_t)-1;
    }
    c->upgraded = 1;
    opening--;
    at = (size_t)(end - buf) + 4;
  }
  while (len - at >= 2) {
    unsigned opcode = buf[at] & 0x0f;
    uint64_t length = buf[at + 1] & 0x7f;
    size_t offset = at + 2;
    if (length == 126) {
      if (len - at < 4) break;
      length = ((uint64_t)buf[at + 2] << 8) | buf[at + 3];
      offset = at + 4;
    } else if (length == 127) {
      if (len - at < 10) break;
      length = 0;
      for (int i = 0; i < 8; i++) length = (length << 8) | buf[at + 2 + i];
      offset = at + 10;
    }
    if (len - offset < length) break;
    if (opcode == 0x9) pong(c, buf + offset, (size_t)length);
    else if (opcode == 0x1 || opcode == 0x2) frame(c, buf + offset, (size_t)length, received);
    at = offset + (size_t)length;
  }
  return at;
}

static void keep(struct conn *c, const unsigned char *data, size_t len) {
  if (c->pcap < len) {
    c->pcap = len * 2;
    c->pending = realloc(c->pending, c->pcap);
    if (!c->pending) die("realloc");
  }
  memmove(c->pending, data, len);
  c->plen = len;
}

static unsigned char readbuf[READ_SIZE];

static void readable(struct conn *c) {
  ssize_t n = read(c->fd, readbuf, sizeof readbuf);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return closed(c, "connection closed");
  if (n < 0) return;
  double received = now_ms();
  if (c->plen == 0) {
    size_t used = parse(c, readbuf, (size_t)n, received);
    if (used == (size_t)-1) return;
    if (used < (size_t)n) keep(c, readbuf + used, (size_t)n - used);
    return;
  }
  if (c->pcap < c->plen + (size_t)n) {
    c->pcap = (c->plen + (size_t)n) * 2;
    c->pending = realloc(c->pending, c->pcap);
    if (!c->pending) die("realloc");
  }
  memcpy(c->pending + c->plen, readbuf, (size_t)n);
  c->plen += (size_t)n;
  size_t used = parse(c, (unsigned char *)c->pending, c->plen, received);
  if (used == (size_t)-1) return;
  keep(c, (unsigned char *)c->pending + used, c->plen - used);
}

static void write_file(const char *prefix, const char *suffix, const void *data, size_t len) {
  char name[4096];
  snprintf(name, sizeof name, "%s%s", prefix, suffix);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) die("open report");
  write_all(fd, data, len);
  close(fd);
}

static char command[256];
static size_t command_len;

static void on_stdin(const char *prefix) {
  ssize_t n = read(0, command + command_len, sizeof command - 1 - command_len);
  if (n <= 0) exit(0); /* the parent is gone */
  command_len += (size_t)n;
  char *eol;
  while ((eol = memchr(command, '\n', command_len)) != NULL) {
    *eol = 0;
    if (strcmp(command, "count") == 0) {
      printf("received %ld\n", received_total);
      fflush(stdout);
    } else if (strcmp(command, "report") == 0) {
      int32_t *deltas = malloc(sizeof(int32_t) * (size_t)count);
      for (int i = 0; i < count; i++) deltas[i] = conns[i].deltas;
      write_file(prefix, ".samples", samples.v, samples.n * sizeof(double));
      write_file(prefix, ".xadd", from_xadd.v, from_xadd.n * sizeof(double));
      write_file(prefix, ".deltas", deltas, sizeof(int32_t) * (size_t)count);
      printf("reported\n");
      fflush(stdout);
      exit(0);
    }
    size_t rest = command_len - (size_t)(eol + 1 - command);
    memmove(command, eol + 1, rest);
    command_len = rest;
  }
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: %s host port path api-key count first report-prefix\n", argv[0]);
    return 2;
  }
  host_arg = argv[1];
  path_arg = argv[3];
  key_arg = argv[4];
  count = atoi(argv[5]);
  first = atoi(argv[6]);
  const char *prefix = argv[7];
  const char *pause_env = getenv("FANOUT_CLIENT_PAUSE_US");
  pause_ns = (pause_env ? atol(pause_env) : DEFAULT_PAUSE_US) * 1000;
  srand((unsigned)getpid());
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)atoi(argv[2]));
  if (inet_pton(AF_INET, host_arg, &addr.sin_addr) != 1) {
    fprintf(stderr, "host must be an IPv4 address\n");
    return 2;
  }
  snprintf(request_head, sizeof request_head,
           "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: %%s\r\nSec-WebSocket-Version: 13\r\n"
           "Sec-WebSocket-Protocol: %%s\r\nAuthorization: Bearer %s\r\n\r\n",
           path_arg, host_arg, argv[2], key_arg);
  conns = calloc((size_t)count, sizeof *conns);
  for (int i = 0; i < count; i++) {
    conns[i].index = i;
    conns[i].fd = -1;
  }
  epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) die("epoll_create1");
  struct epoll_event in = {.events = EPOLLIN, .data.ptr = NULL};
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &in) < 0) die("epoll_ctl stdin");
  struct epoll_event events[512];
  for (;;) {
    /* Opening: at most OPEN_CONCURRENCY upgrades in flight, refusals retried after a pause. */
    double t = now_ms();
    int timeout = -1;
    if (live_count < count) {
      for (int i = 0; i < count && opening < OPEN_CONCURRENCY; i++) {
        struct conn *c = &conns[i];
        if (c->fd >= 0 || c->upgraded) continue;
        if (i >= next_to_open) next_to_open = i + 1;
        else if (c->retry_at == 0 || c->retry_at > t) continue;
        start(c);
      }
      timeout = 20;
    }
    int n = epoll_wait(epfd, events, 512, timeout);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int i = 0; i < n; i++) {
      struct conn *c = events[i].data.ptr;
      if (!c) {
        on_stdin(prefix);
        continue;
      }
      if (c->fd < 0) continue;
      if (events[i].events & EPOLLOUT) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
          errno = err;
          die("connect");
        }
        send_upgrade(c);
      } else if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        readable(c);
      }
    }
    if (n > 0 && live_count == count && pause_ns > 0) {
      struct timespec pause = {pause_ns / 1000000000L, pause_ns % 1000000000L};
      nanosleep(&pause, NULL);
    }
  }
}
