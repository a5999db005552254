# %% [markdown]
# # dask_sweep

# %%
print(1 + 1)
