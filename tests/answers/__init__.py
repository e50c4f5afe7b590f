"""Tests of `papercode.answers`: what each tool answers."""
