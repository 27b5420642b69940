// libFuzzer target: the contacts readers (vCard, Google CSV, a Mac's address book) and the
// naming they feed (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

FuzzContacts.drive()
