"""Your own service (issue 68): the lab's measurement pointed at a Deployment it did not deploy."""
