"""Publishing: versions, diffs between releases, the dataset card, and upload to the Hugging Face Hub."""
