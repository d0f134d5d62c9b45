/*
 * l2cap-raw: the raw throughput of an LE L2CAP connection-oriented channel, the ceiling the OTA
 * push over the same kind of channel is measured against (Scripts/bluez/guest-e2e.sh, step 8).
 * No protocol: the sender fills SDUs of its send MTU with bytes, the receiver counts them.
 *
 *   l2cap-raw listen BYTES [DELAY_US [RCVBUF [MTU]]]
 *                                     bind any LE adapter, a dynamic PSM, receive MTU 4100 (otad's);
 *                                     prints "PSM 0x.." on stderr, then one JSON line on stdout
 *                                     once BYTES arrived (timed from the first SDU to the last).
 *                                     DELAY_US: sleep after each SDU (a reader slower than the
 *                                     link); RCVBUF: the socket's receive buffer (default 4 MiB,
 *                                     as otad's channel; 0 leaves the kernel's default); MTU:
 *                                     the receive MTU (default 4100, otad's)
 *   l2cap-raw send ADDRESS PSM BYTES  connect (public LE address), send BYTES in SDUs of the
 *                                     channel's send MTU; prints one JSON line
 *   l2cap-raw hostile ADDRESS PSM     connect and send what a broken or hostile central could
 *                                     (step 5b): an SDU of 3 bytes, one of the send MTU + 1 (the
 *                                     sender's kernel may refuse it: the JSON says how it went), a
 *                                     chunk whose offset lies far past any image, truncated
 *                                     headers (2 and 4 bytes), then a flood of small chunks and
 *                                     of 1-byte SDUs; prints one JSON line
 *
 * Built in the guest with `cc -O2` (Debian's libbluetooth-dev headers; nothing linked).
 */
#define _GNU_SOURCE
#include <bluetooth/bluetooth.h>
#include <bluetooth/l2cap.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
  fprintf(stderr, "l2cap-raw: %s: %s\n", what, strerror(errno));
  exit(1);
}

static int parse_address(const char *text, bdaddr_t *out) {
  unsigned b[6];
  if (sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x", &b[5], &b[4], &b[3], &b[2], &b[1], &b[0]) != 6) return -1;
  for (int i = 0; i < 6; i++) out->b[i] = (uint8_t)b[i];
  return 0;
}

static uint16_t mtu_option(int fd, int name) {
  uint16_t mtu = 0;
  socklen_t length = sizeof mtu;
  if (getsockopt(fd, SOL_BLUETOOTH, name, &mtu, &length) < 0) return 0;
  return mtu;
}

static int listen_and_count(long long total, long delay_us, int buffer_size, uint16_t receive_mtu) {
  int fd = socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP);
  if (fd < 0) die("socket");
  struct sockaddr_l2 local = {0};
  local.l2_family = AF_BLUETOOTH;
  local.l2_bdaddr_type = BDADDR_LE_PUBLIC;
  if (bind(fd, (struct sockaddr *)&local, sizeof local) < 0) die("bind");
  /* After bind: the kernel takes BT_RCVMTU only on a socket bound to an LE address. */
  if (setsockopt(fd, SOL_BLUETOOTH, BT_RCVMTU, &receive_mtu, sizeof receive_mtu) < 0) die("BT_RCVMTU");
  /* The same receive buffer as otad's channel (DataChannelRules.receiveBuffer). */
  if (buffer_size > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_size, sizeof buffer_size) < 0 &&
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_size, sizeof buffer_size) < 0)
    die("SO_RCVBUF");
  socklen_t length = sizeof local;
  if (getsockname(fd, (struct sockaddr *)&local, &length) < 0) die("getsockname");
  if (listen(fd, 1) < 0) die("listen");
  fprintf(stderr, "PSM 0x%x\n", btohs(local.l2_psm));
  fflush(stderr);
  int channel = accept(fd, NULL, NULL);
  if (channel < 0) die("accept");
  if (buffer_size > 0 &&
      setsockopt(channel, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_size, sizeof buffer_size) < 0 &&
      setsockopt(channel, SOL_SOCKET, SO_RCVBUF, &buffer_size, sizeof buffer_size) < 0)
    die("SO_RCVBUF");
  static uint8_t buffer[65536];
  long long received = 0, sdus = 0;
  double first = 0, last = 0;
  while (received < total) {
    ssize_t got = recv(channel, buffer, sizeof buffer, 0);
    if (got < 0) die("recv");
    if (got == 0) break;
    last = now();
    if (sdus++ == 0) first = last;
    received += got;
    if (delay_us > 0) usleep(delay_us);
  }
  double seconds = last - first;
  printf("{\"role\":\"receiver\",\"bytes\":%lld,\"sdus\":%lld,\"seconds\":%.4f,\"bytesPerSecond\":%.1f,"
         "\"receiveMTU\":%u,\"sendMTU\":%u}\n",
         received, sdus, seconds, seconds > 0 ? (received - received / sdus) / seconds : 0.0,
         mtu_option(channel, BT_RCVMTU), mtu_option(channel, BT_SNDMTU));
  close(channel);
  close(fd);
  return received >= total ? 0 : 1;
}

/* A connected LE channel to ADDRESS's PSM (blocking), or -1 after a message. */
static int connect_channel(const char *address, unsigned psm) {
  int fd = socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP);
  if (fd < 0) die("socket");
  struct sockaddr_l2 peer = {0};
  peer.l2_family = AF_BLUETOOTH;
  peer.l2_psm = htobs(psm);
  peer.l2_bdaddr_type = BDADDR_LE_PUBLIC;
  if (parse_address(address, &peer.l2_bdaddr) < 0) {
    fprintf(stderr, "l2cap-raw: not an address: %s\n", address);
    return -1;
  }
  /* Bound to an LE address type: an unbound socket stays BR/EDR, and the kernel then sends basic
   * L2CAP frames without the SDU length that an LE credit-based channel's receiver expects. */
  struct sockaddr_l2 local = {0};
  local.l2_family = AF_BLUETOOTH;
  local.l2_bdaddr_type = BDADDR_LE_PUBLIC;
  if (bind(fd, (struct sockaddr *)&local, sizeof local) < 0) die("bind");
  if (connect(fd, (struct sockaddr *)&peer, sizeof peer) < 0) die("connect");
  return fd;
}

static int send_bytes(const char *address, unsigned psm, long long total) {
  int fd = connect_channel(address, psm);
  if (fd < 0) return 2;
  uint16_t sdu = mtu_option(fd, BT_SNDMTU);
  if (sdu == 0) sdu = 672;
  static uint8_t buffer[65536];
  memset(buffer, 0x5a, sizeof buffer);
  long long sent = 0;
  double start = now();
  while (sent < total) {
    size_t count = total - sent < sdu ? (size_t)(total - sent) : sdu;
    ssize_t put = send(fd, buffer, count, 0);
    if (put < 0) die("send");
    sent += put;
  }
  double seconds = now() - start;
  printf("{\"role\":\"sender\",\"bytes\":%lld,\"seconds\":%.4f,\"sendMTU\":%u}\n", sent, seconds, sdu);
  /* SDUs still queued for credits die with the channel: wait until the receiver, which closes
   * its end once it has every byte, has closed it (at most 60 s). A fixed second was not always
   * enough under emulation, and the receiver then came up short. */
  struct timeval patience = {.tv_sec = 60};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  uint8_t ignored[16];
  ssize_t got;
  while ((got = recv(fd, ignored, sizeof ignored, 0)) > 0) {
  }
  /* A reset (the LE link under the channel went down) is not the receiver's orderly close: what
   * was still queued for credits may be lost, so the run failed. */
  if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
    fprintf(stderr, "l2cap-raw: the channel ended before the receiver closed it: %s\n", strerror(errno));
    close(fd);
    return 1;
  }
  close(fd);
  return 0;
}

/* One SDU; "sent", or the sender's error text (written into `out`). */
static const char *send_one(int fd, const uint8_t *bytes, size_t count, char *out, size_t size) {
  if (send(fd, bytes, count, 0) == (ssize_t)count) return "sent";
  snprintf(out, size, "refused by the sender: %s", strerror(errno));
  return out;
}

static void put_offset(uint8_t *at, uint32_t offset) {
  for (int i = 0; i < 4; i++) at[i] = (uint8_t)(offset >> (8 * i));
}

static int hostile(const char *address, unsigned psm) {
  int fd = connect_channel(address, psm);
  if (fd < 0) return 2;
  uint16_t mtu = mtu_option(fd, BT_SNDMTU);
  static uint8_t sdu[65536];
  static char why[5][160];
  memset(sdu, 0xA5, sizeof sdu);
  /* 1. Three bytes: less than a chunk's offset. */
  const char *shortSDU = send_one(fd, sdu, 3, why[0], sizeof why[0]);
  /* 2. One byte more than the device takes: the sender's kernel checks its own send MTU
   *    (the device's receive MTU) and may refuse it before it leaves. */
  const char *oversize = send_one(fd, sdu, (size_t)mtu + 1, why[1], sizeof why[1]);
  /* 3. A chunk whose offset lies: 0xFFFFFF00, far past any slot, with 64 bytes. */
  put_offset(sdu, 0xFFFFFF00u);
  const char *lying = send_one(fd, sdu, 68, why[2], sizeof why[2]);
  /* 4. Truncated headers: half an offset, and an offset with no byte after it. */
  const char *truncated2 = send_one(fd, sdu, 2, why[3], sizeof why[3]);
  const char *truncated4 = send_one(fd, sdu, 4, why[4], sizeof why[4]);
  /* 5. A flood: 1000 chunks of 1 byte at lying offsets, and 200 SDUs of 1 byte, without pause
   *    (the kernel's credits pace them, nothing else). */
  int flood = 0;
  for (uint32_t i = 0; i < 1000; i++) {
    put_offset(sdu, 0x7FFFFF00u + i);
    if (send(fd, sdu, 5, 0) == 5) flood++;
  }
  for (int i = 0; i < 200; i++)
    if (send(fd, sdu, 1, 0) == 1) flood++;
  printf("{\"sendMTU\":%u,\"short\":\"%s\",\"oversize\":\"%s\",\"lyingOffset\":\"%s\","
         "\"truncated2\":\"%s\",\"truncated4\":\"%s\",\"flood\":%d}\n",
         mtu, shortSDU, oversize, lying, truncated2, truncated4, flood);
  fflush(stdout);
  /* Let the last SDUs leave before the channel closes. */
  sleep(1);
  close(fd);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && argc <= 6 && strcmp(argv[1], "listen") == 0)
    return listen_and_count(atoll(argv[2]), argc > 3 ? atol(argv[3]) : 0, argc > 4 ? atoi(argv[4]) : 4 << 20,
                            argc > 5 ? (uint16_t)atoi(argv[5]) : 4100);
  if (argc == 5 && strcmp(argv[1], "send") == 0)
    return send_bytes(argv[2], (unsigned)strtoul(argv[3], NULL, 0), atoll(argv[4]));
  if (argc == 4 && strcmp(argv[1], "hostile") == 0) return hostile(argv[2], (unsigned)strtoul(argv[3], NULL, 0));
  fprintf(stderr, "usage: l2cap-raw listen BYTES [DELAY_US [RCVBUF [MTU]]] | l2cap-raw send ADDRESS PSM BYTES"
                  " | l2cap-raw hostile ADDRESS PSM\n");
  return 2;
}
