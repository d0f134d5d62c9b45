#ifndef BLUEOTA_CBLUETOOTH_SHIM_H
#define BLUEOTA_CBLUETOOTH_SHIM_H
/* The Bluetooth socket interface from Debian's libbluetooth-dev: AF_BLUETOOTH, BTPROTO_L2CAP,
   struct sockaddr_l2, the SOL_BLUETOOTH options (BT_SECURITY, BT_SNDMTU, BT_RCVMTU, BT_PHY) and
   L2CAP_OPTIONS; the raw HCI socket's address and event filter (struct sockaddr_hci, struct
   hci_filter, HCI_FILTER) for reading the controller's link events. Only the headers: nothing
   here calls into libbluetooth.so, so otad needs no Bluetooth library at run time, only the
   kernel's socket family. */
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/l2cap.h>
#include <bluetooth/hci.h>

#endif
