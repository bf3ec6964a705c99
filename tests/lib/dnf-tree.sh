# A dnf sandbox's system layer for the tests (sourced).
# SPDX-License-Identifier: LGPL-2.1-or-later

# gl_dnf_tree TREE REPO_ID BASEURL: makes TREE, the system layer of a
# sandbox over the host, Fedora-like for dnf: its os-release, an empty rpm
# database in /var/lib/rpm, gpgcheck off, one repository REPO_ID at
# BASEURL (/etc/yum.repos.d/REPO_ID.repo).
gl_dnf_tree () {
  local tree=$1
  mkdir -p "$tree/etc/rpm" "$tree/etc/yum.repos.d" "$tree/etc/dnf" "$tree/var/lib/rpm"
  printf 'NAME="Fedora Linux"\nID=fedora\nVERSION_ID=40\n' > "$tree/etc/os-release"
  echo '%_dbpath /var/lib/rpm' > "$tree/etc/rpm/macros.dbpath"
  printf '[main]\ngpgcheck=0\n' > "$tree/etc/dnf/dnf.conf"
  printf '[%s]\nname=Glimpse test\nbaseurl=%s\ngpgcheck=0\n' "$2" "$3" > "$tree/etc/yum.repos.d/$2.repo"
  rpm --root "$tree" --dbpath /var/lib/rpm --initdb
}
