// Live page updates over Channels websockets (see issue 5).
