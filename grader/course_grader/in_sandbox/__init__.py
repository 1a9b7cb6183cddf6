"""What runs inside the student's sandbox: no reference answers, no hidden tests, no secrets."""
