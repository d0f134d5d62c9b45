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

static int send_bytes(const char *address, unsigned psm, long long total) {
  int fd = socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP);
  if (fd < 0) die("socket");
  struct sockaddr_l2 peer = {0};
  peer.l2_family = AF_BLUETOOTH;
  peer.l2_psm = htobs(psm);
  peer.l2_bdaddr_type = BDADDR_LE_PUBLIC;
  if (parse_address(address, &peer.l2_bdaddr) < 0) {
    fprintf(stderr, "l2cap-raw: not an address: %s\n", address);
    return 2;
  }
  /* Bound to an LE address type: an unbound socket stays BR/EDR, and the kernel then sends basic
   * L2CAP frames without the SDU length that an LE credit-based channel's receiver expects. */
  struct sockaddr_l2 local = {0};
  local.l2_family = AF_BLUETOOTH;
  local.l2_bdaddr_type = BDADDR_LE_PUBLIC;
  if (bind(fd, (struct sockaddr *)&local, sizeof local) < 0) die("bind");
  if (connect(fd, (struct sockaddr *)&peer, sizeof peer) < 0) die("connect");
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
  fprintf(stderr, "usage: l2cap-raw listen BYTES [DELAY_US [RCVBUF [MTU]]] | l2cap-raw send ADDRESS PSM BYTES\n");
  return 2;
}
