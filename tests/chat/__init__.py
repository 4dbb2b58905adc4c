"""Tests of the follow-up chat: offline answers, question masking, the chat eval."""
