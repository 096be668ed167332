"""Tasks: prompt + parse + score, one module per paper."""
