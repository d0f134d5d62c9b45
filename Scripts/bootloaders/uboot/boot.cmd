# BlueOTA's A/B boot script for U-Boot, RAUC's scheme (docs/BOOT-BACKENDS.md). otad writes
# BOOT_ORDER, BOOT_A_LEFT and BOOT_B_LEFT with fw_setenv; this script takes the first slot in
# BOOT_ORDER with boots left, counts the boot, saves the environment and boots that slot from the
# device distro boot found this script on (${devtype} ${devnum}): slot A is partition 2, slot B
# partition 3, each with /boot/Image. Make it boot.scr with:
#   mkimage -A arm -T script -C none -d boot.cmd boot.scr

# The board's part: the arguments every kernel gets and each slot's root filesystem. They are
# here, not in the environment, so that a board whose environment was lost (U-Boot's built-in
# defaults) still boots with them.
setenv bootargs_board "console=ttyAMA0"
setenv root_A "/dev/vda2"
setenv root_B "/dev/vda3"

# The slots to try: otad's BOOT_ORDER, else (a new board, or one whose environment was lost) both.
# That default stays a shell variable: saved as BOOT_ORDER it would read to otad as a pointer it
# wrote itself, "B A" as much as "A B", and name a primary slot nobody chose.
order="${BOOT_ORDER}"
test -n "${order}" || order="A B"
test -n "${BOOT_A_LEFT}" || setenv BOOT_A_LEFT 3
test -n "${BOOT_B_LEFT}" || setenv BOOT_B_LEFT 3

setenv bootpart
setenv raucslot
setenv rootfs
for BOOT_SLOT in "${order}"; do
  if test "x${bootpart}" != "x"; then
    # a slot is chosen: skip the rest
  elif test "x${BOOT_SLOT}" = "xA"; then
    if test ${BOOT_A_LEFT} -gt 0; then
      setexpr BOOT_A_LEFT ${BOOT_A_LEFT} - 1
      echo "Booting slot A"
      setenv bootpart 2
      setenv raucslot A
      setenv rootfs ${root_A}
    fi
  elif test "x${BOOT_SLOT}" = "xB"; then
    if test ${BOOT_B_LEFT} -gt 0; then
      setexpr BOOT_B_LEFT ${BOOT_B_LEFT} - 1
      echo "Booting slot B"
      setenv bootpart 3
      setenv raucslot B
      setenv rootfs ${root_B}
    fi
  fi
done

if test -n "${bootpart}"; then
  # Built whole on every boot: appending to ${bootargs} would be saved by saveenv and grow by one
  # root= and rauc.slot= per boot.
  setenv bootargs "${bootargs_board} root=${rootfs} rootwait rauc.slot=${raucslot}"
  saveenv
else
  echo "No slot has boots left: resetting the counts"
  setenv BOOT_A_LEFT 3
  setenv BOOT_B_LEFT 3
  saveenv
  reset
fi

# The board's device tree file if the environment names one, else the device tree U-Boot runs
# with (qemu's virt machine and boards whose firmware hands U-Boot a device tree name none).
setenv fdt_boot ${fdtcontroladdr}
if test -n "${fdtfile}"; then
  if load ${devtype} ${devnum}:${bootpart} ${fdt_addr_r} /boot/${fdtfile}; then
    setenv fdt_boot ${fdt_addr_r}
  fi
fi
if load ${devtype} ${devnum}:${bootpart} ${kernel_addr_r} /boot/Image; then
  booti ${kernel_addr_r} - ${fdt_boot}
fi
# The slot's kernel is missing or did not start: reset, so that the next boot counts again and the
# order falls back once this slot's boots are spent (distro boot would go on to its next target,
# then wait at the prompt).
echo "Slot ${raucslot} did not boot: resetting"
reset
