"""Secrets as people paste them into a chat: (how it reads in a message, the secret itself).

The second part is what must never be found stored, logged or queued once memoryweb has seen
the first; each is distinctive enough that finding it cannot be a coincidence.
"""

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJxOTg3NjU0MzIxIiwibmFtZSI6IlFhcmwifQ"
    ".Xk2mP9rT4vW8yB1nE5hJ7cL3qZ6sD0fG_aUoIe-KwRt"
)

SECRETS: list[tuple[str, str]] = [
    ("my openai key is sk-proj-Qw3rTy7uIo9pAs1dFg5hJk2lZx8cVb4n", "sk-proj-Qw3rTy7uIo9pAs1dFg5hJk2lZx8cVb4n"),
    ("sk-ant-api03-Zq8wX2eC4rV6tB1yN3uM5iK7oL9pAa", "sk-ant-api03-Zq8wX2eC4rV6tB1yN3uM5iK7oL9pAa"),
    ("aws id AKIAQ7XW2ZK9PLMN4R5T", "AKIAQ7XW2ZK9PLMN4R5T"),
    (
        "aws_secret_access_key = Qx7/Lm2Kp9Zr4Tw8Yb1Nc6Vd3Fg5Hj0Sa+Ue7Io2",
        "Qx7/Lm2Kp9Zr4Tw8Yb1Nc6Vd3Fg5Hj0Sa+Ue7Io2",
    ),
    ("github ghp_Rk7Tq2Wx9Zm4Pn8Lb3Vc6Yd1Fh5Gj0Ks3Aa", "ghp_Rk7Tq2Wx9Zm4Pn8Lb3Vc6Yd1Fh5Gj0Ks3Aa"),
    (
        "github_pat_11QWERTY0987654321_zxcvbnmasdfghjklqwertyuiop",
        "github_pat_11QWERTY0987654321_zxcvbnmasdfghjklqwertyuiop",
    ),
    ("slack xoxb-918273645501-QwErTyUiOpAs", "xoxb-918273645501-QwErTyUiOpAs"),
    ("stripe sk_live_Zt8Qw2Er4Ty6Ui8Op0As", "sk_live_Zt8Qw2Er4Ty6Ui8Op0As"),
    ("maps AIzaSyQ7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2J", "AIzaSyQ7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2J"),
    (f"session {JWT}", JWT),
    ("Authorization: Bearer Zk9Qm2Xw7Rt4Yp1Lb6Nc3Vd8", "Zk9Qm2Xw7Rt4Yp1Lb6Nc3Vd8"),
    ("api_key=Qz8Wm3Xk7Rp2Tn5Y", "Qz8Wm3Xk7Rp2Tn5Y"),
    ("token: Hq4Wz8Xm2Rk6Tp9N", "Hq4Wz8Xm2Rk6Tp9N"),
    ("password: Gl4cier!Peak93", "Gl4cier!Peak93"),
    ("my password is Marm0t-Ridge", "Marm0t-Ridge"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEqQkBAAKCAQEAq7ZsWxR9\nTmPvLk2Q\n-----END RSA PRIVATE KEY-----",
        "MIIEqQkBAAKCAQEAq7ZsWxR9",
    ),
    ("card 4242 4242 4242 4242 exp 09/29", "4242 4242 4242 4242"),
    ("IBAN DE44 5001 0517 5407 3249 31", "DE44 5001 0517 5407 3249 31"),
    ("my SSN is 219-09-9999", "219-09-9999"),
    ("sidecar mw_9f8e7d6c_Qz8Wm3Xk7Rp2Tn5YbL1vC4", "mw_9f8e7d6c_Qz8Wm3Xk7Rp2Tn5YbL1vC4"),
    ("postgres://app:Pq7sW0rdZ@db.internal:5432/main", "Pq7sW0rdZ"),
    # passwords in URLs, with an empty user too
    ("cache at redis://:Rz9pQ2wX7v@cache.internal:6379/0", "Rz9pQ2wX7v"),
    ("postgres://user:Kp3mVn8Qx@pg.internal/app", "Kp3mVn8Qx"),
    ("broker amqp://:Am9qP4wX2@rabbit.internal//", "Am9qP4wX2"),
    ("https://deploy:Ht7pZq3Wx@git.example.com/repo.git", "Ht7pZq3Wx"),
    ("mongodb+srv://u:Mg5Qz8Xw@cluster0.example.net/db", "Mg5Qz8Xw"),
]
