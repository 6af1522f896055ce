"""Every built image reports (INFO) the key and signature sizes its api.h compiled in; they must be
the catalogue's, which the host tool and reports rely on. Slow rows too: HELLO runs no scheme."""

import pytest

from conftest import catalogue_rows

ROWS = [row for row in catalogue_rows() if row["status"] == "ok"]


@pytest.mark.parametrize("row", ROWS, ids=[f"{row['scheme']}/{row['impl']}" for row in ROWS])
def test_image_sizes_match_the_catalogue(row, image_session):
    info = image_session(row["scheme"], row["impl"]).hello()
    assert (info.scheme, info.impl) == (row["scheme"], row["impl"])
    assert (info.pk_bytes, info.sk_bytes, info.sig_bytes) == (row["pk_bytes"], row["sk_bytes"], row["sig_bytes"])
    assert info.stack_budget_bytes >= row["stack_bytes"]
